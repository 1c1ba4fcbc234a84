'use strict';
// agent-exec: the native runtime plus the tool adapters, in one import.

const { loadNative } = require('./native.js');

const native = loadNative();

module.exports = {
  exec: native.exec,
};
