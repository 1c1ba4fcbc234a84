'use strict';
// OpenClaw-compatible bash tools over the native runtime.

const { createExecTool, describeExecTool } = require('./exec-tool.js');
const { createProcessTool } = require('./process-tool.js');
const { createClaudeCodeTools, isSearchOrReadCommand, isReadOnly } = require('./claude-code/index.js');

/** Both tools with shared defaults, as OpenClaw's `createBashTools` hands them to an agent. */
function createBashTools(defaults = {}) {
  return { exec: createExecTool(defaults), process: createProcessTool(defaults) };
}

module.exports = {
  createExecTool,
  createProcessTool,
  createBashTools,
  describeExecTool,
  createClaudeCodeTools,
  isSearchOrReadCommand,
  isReadOnly,
};
