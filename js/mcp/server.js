'use strict';
// `agent-exec mcp`: the runtime as a stdio MCP server (the official TypeScript SDK's low-level Server,
// so the tools' JSON schemas are ours as written). Approvals that must ask go to the user through
// elicitation where the client offers it; otherwise the configured fallback decides. When the client
// goes away (stdin closes) or the server is told to stop, every session it started is ended first;
// a SIGKILL of the server is covered by the runtime's own host watchdog.

const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { ListToolsRequestSchema, CallToolRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const native = require('../native.js').loadNative();
const { TOOLS, toolHandlers, callTool } = require('./tools.js');

const DECISION_TITLES = { 'allow-once': 'Allow once', 'allow-always': 'Allow always', deny: 'Deny' };

/** What "Allow always" keeps and where, or why it is not offered: the grant is never wider than what the user read. */
function allowAlwaysLine(always) {
  if (always.withheld) return `Allow always is not offered: ${always.withheld}.`;
  if (always.entries.length === 0) return 'Allow always adds nothing here (the command could not be resolved): it acts as allow once.';
  if (always.file) return `Allow always adds ${always.entries.join(', ')} to the allowlist of agent "${always.agentId}" in ${always.file}: later commands running ${always.entries.length === 1 ? 'it' : 'them'} are not asked.`;
  return `Allow always adds the rule${always.entries.length === 1 ? '' : 's'} ${always.entries.join(', ')} for as long as this server runs.`;
}

/** The question put to the user for one approval request, as an elicitation form. */
function approvalForm(request) {
  const lines = [`Run this command?`, '', request.command, '', `Directory: ${request.cwd}`, `Why you are asked: ${request.reason}`];
  if (request.analysisReason) lines.push(`Analysis: ${request.analysisReason}`);
  lines.push(allowAlwaysLine(request.allowAlways));
  return {
    message: lines.join('\n'),
    requestedSchema: {
      type: 'object',
      properties: {
        // A titled single-select (the schema's oneOf of const/title; enumNames is the legacy form).
        decision: {
          type: 'string',
          title: 'Decision',
          oneOf: request.allowedDecisions.map((d) => ({ const: d, title: DECISION_TITLES[d] ?? d })),
        },
      },
      required: ['decision'],
    },
  };
}

/** Whether some command could need a person's answer under this policy. */
function needsAsking(approval) {
  if (approval.rules) return true;
  if (approval.security === 'deny' || approval.ask === 'off') return false;
  return approval.security !== 'full' || approval.ask === 'always';
}

function createServer(config, { version = require('../../package.json').version } = {}) {
  const server = new Server({ name: 'agent-exec', version }, { capabilities: { tools: {} } });

  // Present only when the client can show a form: then the approval gate waits for the user's answer.
  async function askUser(request) {
    const result = await server.elicitInput(approvalForm(request), { timeout: config.approval.timeoutMs });
    if (result.action !== 'accept') return 'deny';
    const decision = result.content?.decision;
    if (!request.allowedDecisions.includes(decision)) return 'deny';
    // Under rules the server keeps what the form said it would: the rules, for as long as it runs.
    if (decision === 'allow-always' && config.approval.rules && !request.allowAlways.file) {
      for (const rule of request.allowAlways.entries) {
        if (!config.approval.rules.allow.includes(rule)) config.approval.rules.allow.push(rule);
      }
    }
    return decision;
  }

  const canElicit = () => Boolean(server.getClientCapabilities()?.elicitation);
  // Without elicitation there is nobody to ask: no handler, so the policy's askFallback decides.
  const handlers = toolHandlers(config, { asker: () => (canElicit() ? askUser : undefined) });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => callTool(handlers, req.params.name, req.params.arguments, extra));
  // A client that cannot be asked runs only what the policy allows: say so once, where the person
  // who configured the server looks (stderr; stdout is the protocol).
  server.oninitialized = () => {
    if (!canElicit() && needsAsking(config.approval)) {
      const client = server.getClientVersion()?.name ?? 'this client';
      process.stderr.write(
        `agent-exec mcp: ${client} does not offer elicitation, so nobody can be asked to approve a command: what the policy does not allow is refused (--ask-fallback ${config.approval.askFallback}). Allow commands with --allow 'Bash(npm test:*)', --allow-read-only, or --ask-fallback allowlist|full.\n`,
      );
    }
  };
  return server;
}

/** End every session this process started, each tree in parallel, within the grace period. */
async function endAllSessions() {
  const sessions = native.listSessions();
  await Promise.allSettled(sessions.map((s) => native.removeSession(s.sessionId)));
}

/** Serve on stdin/stdout until the client disconnects or a signal arrives; resolves with the exit code. */
async function serveStdio(config) {
  const server = createServer(config);
  const transport = new StdioServerTransport();
  let finish;
  const done = new Promise((resolve) => {
    finish = resolve;
  });
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    await endAllSessions();
    finish(code);
  };
  transport.onclose = () => stop(0);
  process.stdin.on('end', () => stop(0));
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
  process.once('SIGHUP', () => stop(0));
  await server.connect(transport);
  return done;
}

module.exports = { createServer, serveStdio, approvalForm, endAllSessions };
