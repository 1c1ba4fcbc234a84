'use strict';
// What the Claude Code tools say to the model: the output, how the command ended, where the full
// output is when the text was cut, and why a command did not run. One function per result kind, so
// the wording lives in one place (the README lists it).

const { headAndTail } = require('../shared.js');

/** Milliseconds as Claude Code writes a duration: 500ms, 45s, 2m, 2m 30s. */
function duration(ms) {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
}

/** The output for the model: at most `max` characters, head and tail, saying where the rest is. */
function preview(output, max, { totalChars, outputFile }) {
  const text = output.replace(/\n+$/, '');
  const total = Math.max(totalChars ?? 0, output.length);
  const nativeCut = /\[\.\.\. (\d+) chars omitted \.\.\.\]/.test(text);
  if (text.length <= max && !nativeCut) return { text, cut: false };
  let body = text;
  if (text.length > max) {
    const { head, tail } = headAndTail(text, max);
    body = `${head}${head.endsWith('\n') ? '' : '\n'}[... ${total - head.length - tail.length} characters cut ...]\n${tail}`;
  }
  const where = outputFile ? ` The full output is in ${outputFile}; read it there for the rest.` : '';
  return { text: `${body}\n\nOutput was cut: ${total} characters, more than the ${max} shown.${where}`, cut: true };
}

/** A finished command: its output, then how it ended when that was not a clean exit. */
function finished(outcome, { max, timeoutMs }) {
  const { text, cut } = preview(outcome.output, max, outcome);
  const lines = [];
  if (outcome.timedOut) lines.push(`Command timed out after ${duration(timeoutMs)}.`);
  else if (outcome.aborted) lines.push('Command was aborted before it completed.');
  else if (outcome.exitSignal) lines.push(`Command was killed by ${outcome.exitSignal}.`);
  else if (outcome.exitCode) lines.push(`Exit code ${outcome.exitCode}`);
  const body = text || (lines.length ? '' : '(no output)');
  return { text: [...lines, body].filter(Boolean).join('\n'), cut };
}

function movedToBackground(outcome, { budgetMs, requested }) {
  const why = requested ? '' : ` It was still running after ${duration(budgetMs)}, so it was moved to the background.`;
  const where = outcome.outputFile ? ` Output is being written to: ${outcome.outputFile}.` : '';
  return `Command running in background with ID: ${outcome.sessionId}.${why}${where} Use BashOutput with this ID to read new output, KillShell to stop it.`;
}

function denied(outcome) {
  const a = outcome.approval;
  if (!a) return `Command was not run: ${outcome.reason || 'denied'}.`;
  if (a.decidedBy === 'policy') return `Permission to run this command was denied: ${a.reason}.`;
  if (a.answer === 'timeout') return 'Permission to run this command was not given in time, so it was not run.';
  if (a.answer === 'error') return `Permission to run this command could not be asked (${a.reason}), so it was not run.`;
  return 'The user denied permission to run this command. It was not run.';
}

const SANDBOX_OVERRIDE_REFUSED =
  'dangerouslyDisableSandbox is not allowed here: the sandbox policy requires every command to run sandboxed (allowUnsandboxedCommands is false). The command was not run. Run it without dangerouslyDisableSandbox; if it fails because of the sandbox, tell the user what it needs.';

function sandboxRefusals(outcome) {
  const denials = outcome.sandbox?.denials ?? [];
  if (denials.length === 0) return '';
  const lines = denials.map((d) => `- ${d.operation} ${d.path ?? d.detail}: ${d.rule}`);
  return `\n\nThe sandbox refused:\n${lines.join('\n')}`;
}

/** BashOutput's text: status, exit code, the new output per stream, and the time of the read. */
function backgroundOutput({ status, exitCode, stdout, stderr, filtered, filter }) {
  const parts = [`<status>${status}</status>`];
  if (exitCode !== undefined && exitCode !== null) parts.push(`<exit_code>${exitCode}</exit_code>`);
  if (stdout) parts.push(`<stdout>\n${stdout.replace(/\n+$/, '')}\n</stdout>`);
  if (stderr) parts.push(`<stderr>\n${stderr.replace(/\n+$/, '')}\n</stderr>`);
  if (filtered) parts.push(`<filter>${filter}</filter>`);
  parts.push(`<timestamp>${new Date().toISOString()}</timestamp>`);
  return parts.join('\n\n');
}

module.exports = { duration, preview, finished, movedToBackground, denied, sandboxRefusals, backgroundOutput, SANDBOX_OVERRIDE_REFUSED };
