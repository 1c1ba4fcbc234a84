'use strict';
// The companions of `Bash` for background commands, in Claude Code's shape: `BashOutput` returns what a
// background command wrote since the last read (optionally only the lines a regex matches), and
// `KillShell` stops one, its whole process tree. Both work on the runtime's sessions of this tool
// set's scope: a session of another scope is not found.

const native = require('../../native.js').loadNative();
const shared = require('../shared.js');
const texts = require('./texts.js');

function idOf(input, field) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw shared.typedError('ERR_INVALID_OPTION', `Input must be an object such as {"${field}": "<id>"}, but it is ${shared.describeType(input)}.`);
  }
  const id = input[field];
  if (typeof id !== 'string' || id.trim() === '') {
    throw shared.typedError('ERR_INVALID_OPTION', `${field} must be the ID a background Bash command returned, but it is ${shared.describeType(id)}.`);
  }
  return id.trim();
}

function notFound(id) {
  return { content: [{ type: 'text', text: `No background shell found with ID: ${id}` }], isError: true, details: { status: 'not-found' } };
}

function createBashOutputTool(cfg) {
  const inputSchema = {
    type: 'object',
    properties: {
      bash_id: { type: 'string', description: 'The ID of the background command' },
      filter: {
        type: 'string',
        description: 'Optional regular expression: only output lines that match are returned (the others are consumed by this read)',
      },
    },
    required: ['bash_id'],
    additionalProperties: false,
  };

  async function execute(toolUseId, input) {
    const id = idOf(input, 'bash_id');
    let filter = null;
    if (input.filter !== undefined && input.filter !== null && input.filter !== '') {
      if (typeof input.filter !== 'string') throw shared.typedError('ERR_INVALID_OPTION', `filter must be a regular expression string, but it is ${shared.describeType(input.filter)}.`);
      try {
        filter = new RegExp(input.filter);
      } catch (e) {
        throw shared.typedError('ERR_INVALID_OPTION', `filter is not a valid regular expression: ${e.message}.`);
      }
    }
    if (!native.getSession(id, { scopeKey: cfg.scopeKey })) return notFound(id);
    const polled = await native.pollSession(id, { scopeKey: cfg.scopeKey, timeoutMs: 0 });
    const keep = (text) => (filter ? text.split('\n').filter((line) => filter.test(line)).join('\n') : text);
    const status = polled.status === 'running' ? 'running' : polled.exitSignal ? 'killed' : polled.status;
    const text = texts.backgroundOutput({
      status,
      exitCode: polled.exited ? polled.exitCode : undefined,
      stdout: keep(polled.stdout),
      stderr: keep(polled.stderr),
      filtered: Boolean(filter),
      filter: input.filter,
    });
    const dropped = polled.droppedChars ? `\n\n(${polled.droppedChars} characters were not read in time; the full output is in ${polled.outputFile ?? 'the session log'})` : '';
    return {
      content: [{ type: 'text', text: text + dropped }],
      isError: false,
      details: { status, exitCode: polled.exitCode, exitSignal: polled.exitSignal, outputFile: polled.outputFile },
    };
  }

  return {
    name: 'BashOutput',
    description: 'Read the new output of a background Bash command (everything since the last read), with its status. Optionally keep only the lines a regular expression matches.',
    inputSchema,
    parameters: inputSchema,
    execute,
  };
}

function createKillShellTool(cfg) {
  const inputSchema = {
    type: 'object',
    properties: { shell_id: { type: 'string', description: 'The ID of the background command to stop' } },
    required: ['shell_id'],
    additionalProperties: false,
  };

  async function execute(toolUseId, input) {
    const id = idOf(input, 'shell_id');
    const session = native.getSession(id, { scopeKey: cfg.scopeKey });
    if (!session) return notFound(id);
    if (session.status !== 'running') {
      return {
        content: [{ type: 'text', text: `Shell ${id} is not running, so it cannot be killed (status: ${session.status}).` }],
        isError: true,
        details: { status: session.status },
      };
    }
    const killed = await native.killSession(id, { scopeKey: cfg.scopeKey });
    const survivors = killed.survivors.length ? ` ${killed.survivors.length} process(es) survived SIGKILL: ${killed.survivors.join(', ')}.` : '';
    return {
      content: [{ type: 'text', text: `Successfully killed shell: ${id} (${session.command})${survivors}` }],
      isError: killed.survivors.length > 0,
      details: { status: 'killed', exitSignal: killed.exitSignal, survivors: killed.survivors },
    };
  }

  return {
    name: 'KillShell',
    description: 'Stop a background Bash command by its ID: the command and every process it started.',
    inputSchema,
    parameters: inputSchema,
    execute,
  };
}

module.exports = { createBashOutputTool, createKillShellTool };
