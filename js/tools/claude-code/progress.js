'use strict';
// Progress of a running Bash call for the UI: after `afterMs` (2 s) and then about every `everyMs`
// (1 s), `report({lastLines, totalLines, totalBytes, incomplete, elapsedMs})`. It counts what the
// runtime streams through `onOutput` and keeps only the last few lines; it never holds the output.

const LAST_LINES = 5;

function progressReporter({ report, afterMs, everyMs }) {
  const started = Date.now();
  let totalBytes = 0;
  let totalLines = 0;
  // The last lines seen, the last one possibly still being written.
  let last = [''];
  let timer = null;
  let stopped = false;

  function onOutput(chunk) {
    const text = chunk.text;
    totalBytes += Buffer.byteLength(text);
    const pieces = text.split('\n');
    last[last.length - 1] += pieces[0];
    for (let i = 1; i < pieces.length; i++) {
      totalLines += 1;
      last.push(pieces[i]);
    }
    if (last.length > LAST_LINES + 1) last = last.slice(-(LAST_LINES + 1));
  }

  function snapshot() {
    const partial = last[last.length - 1] !== '';
    const complete = partial ? last : last.slice(0, -1);
    return {
      lastLines: complete.slice(-LAST_LINES),
      // A last line without its newline yet counts as a line.
      totalLines: totalLines + (partial ? 1 : 0),
      totalBytes,
      // The last line shown is still being written (no newline yet).
      incomplete: partial,
      elapsedMs: Date.now() - started,
    };
  }

  function tick() {
    if (stopped) return;
    try {
      report(snapshot());
    } catch {
      // A UI callback that throws must not end the command; progress is best effort.
    }
    timer = setTimeout(tick, everyMs);
    timer.unref?.();
  }

  if (typeof report === 'function') {
    timer = setTimeout(tick, afterMs);
    timer.unref?.();
  }

  return {
    onOutput,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

module.exports = { progressReporter };
