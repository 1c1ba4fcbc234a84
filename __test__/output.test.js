'use strict';
// Output decoding does not depend on where the kernel cut the reads: multi-byte characters, escapes and
// line edits split across writes come back exactly as one write of the whole would, over pipes and PTYs.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { killTracked, tempDir, run } = require('./helpers.js');

test.after(killTracked);

/**
 * A Python script that writes `hex` (the bytes) in pieces cut at `cuts`, each as its own read.
 *
 * Over pipes the split is certain: before the next piece the writer waits (FIONREAD on its own end)
 * until the reader has taken every byte of the pipe, so no two pieces can be merged into one read; it
 * exits with status 3 if the reader never drains it. A PTY's slave side cannot see what the reader took,
 * so there the writer pauses instead; the decoder is the same for both, and its every-split property
 * is proved in `core/src/output/sanitize.rs` (proptest over all cuts).
 */
function writer(dir, hex, cuts) {
  const script = path.join(dir, 'writer.py');
  fs.writeFileSync(
    script,
    [
      'import fcntl, os, stat, struct, termios, time',
      `data = bytes.fromhex(${JSON.stringify(hex)})`,
      `cuts = ${JSON.stringify(cuts)}`,
      'pipe = stat.S_ISFIFO(os.fstat(1).st_mode)',
      'def unread():',
      "    return struct.unpack('i', fcntl.ioctl(1, termios.FIONREAD, b'\\0' * 4))[0]",
      'start = 0',
      'for end in cuts + [len(data)]:',
      '    os.write(1, data[start:end])',
      '    start = end',
      '    if not pipe:',
      '        time.sleep(0.05)',
      '        continue',
      '    deadline = time.monotonic() + 10',
      '    while unread() > 0:',
      '        if time.monotonic() > deadline:',
      '            os._exit(3)',
      '        time.sleep(0.001)',
    ].join('\n'),
  );
  return `python3 ${script}`;
}

const reported = Buffer.from('A\u00e9B\u{1F389}C\n', 'utf8');

for (const pty of [false, true]) {
  const over = pty ? 'a PTY' : 'pipes';

  test(`a character after a completed split one is kept (${over})`, async () => {
    const dir = tempDir();
    const r = await run({ command: writer(dir, reported.toString('hex'), [2, 5, 7]), cwd: dir, pty, timeoutMs: 20000 });
    assert.equal(r.exitCode, 0, r.output);
    assert.equal(r.output, 'A\u00e9B\u{1F389}C\n');
  });

  test(`every byte written on its own decodes as one write (${over})`, async () => {
    const dir = tempDir();
    // Two-, three- and four-byte characters, an invalid byte, a colour split inside its escape, a
    // progress redraw and a backspace overstrike.
    const bytes = Buffer.concat([
      Buffer.from('é€🎉\x1b[31mred\x1b[0m ', 'utf8'),
      Buffer.from([0xff]),
      Buffer.from('\n10%\r100%\nab_\bc\n', 'utf8'),
    ]);
    const cuts = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    const r = await run({ command: writer(dir, bytes.toString('hex'), cuts), cwd: dir, pty, timeoutMs: 30000 });
    assert.equal(r.exitCode, 0, r.output);
    assert.equal(r.output, 'é€🎉red \ufffd\n100%\nabc\n');
  });
}
