'use strict';
// agent-exec: the native runtime plus the tool adapters, in one import.

const { loadNative } = require('./native.js');

const native = loadNative();
const tools = require('./tools/index.js');
const { bridgeChildProcess } = require('./bridge.js');
const { sessionList } = require('./session-list.js');

module.exports = {
  exec: native.exec,
  listSessions: sessionList().listSessions,
  getSession: native.getSession,
  pollSession: native.pollSession,
  readLog: native.readLog,
  writeStdin: native.writeStdin,
  sendKeys: native.sendKeys,
  pasteText: native.pasteText,
  resizePty: native.resizePty,
  readScreen: native.readScreen,
  killSession: native.killSession,
  clearSession: native.clearSession,
  removeSession: native.removeSession,
  setSessionTtl: native.setSessionTtl,
  getSessionTtl: native.getSessionTtl,
  analyzeCommand: native.analyzeCommand,
  evaluateCommand: native.evaluateCommand,
  classifyCommand: native.classifyCommand,
  checkPermissionRules: native.checkPermissionRules,
  checkModelEnv: native.checkModelEnv,
  preflightCommand: native.preflightCommand,
  sandboxCapabilities: native.sandboxCapabilities,
  processTracking: native.processTracking,
  trackedCwd: native.trackedCwd,
  tightenApproval: native.tightenApproval,
  resolveWorkdir: native.resolveWorkdir,
  createExecTool: tools.createExecTool,
  createProcessTool: tools.createProcessTool,
  createBashTools: tools.createBashTools,
  createClaudeCodeTools: tools.createClaudeCodeTools,
  isSearchOrReadCommand: tools.isSearchOrReadCommand,
  isReadOnly: tools.isReadOnly,
  bridgeChildProcess,
};
