'use strict';
// The child-process bridge: a host that starts a long-running child outside `exec` (a CLI respawn, a
// gateway helper) attaches it, so the host's termination signals reach the child too and no orphan
// survives a service stop (systemd signals the main process only). The listeners go away when the
// child exits or fails to start.

const DEFAULT_SIGNALS = process.platform === 'win32' ? ['SIGTERM', 'SIGINT', 'SIGBREAK'] : ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'];

/** This module's listeners per signal, to know whether the host has a listener of its own. */
const ours = new Map();

function count(signal) {
  return ours.get(signal)?.size ?? 0;
}

/**
 * Forward the host's termination signals to `child` until it exits or errors. A signal the host does
 * not handle itself still ends the host as Node's default would (after the child got it), since a
 * listener would otherwise keep the host alive.
 *
 * @param {import('node:child_process').ChildProcess} child
 * @param {{signals?: NodeJS.Signals[], onSignal?: (signal: NodeJS.Signals) => void}} [options]
 * @returns {{detach: () => void}}
 */
function bridgeChildProcess(child, options = {}) {
  if (!child || typeof child.kill !== 'function' || typeof child.once !== 'function') {
    throw new TypeError('bridgeChildProcess needs a ChildProcess from node:child_process (spawn, fork, exec or execFile).');
  }
  const signals = options.signals ?? DEFAULT_SIGNALS;
  if (!Array.isArray(signals) || signals.some((s) => typeof s !== 'string' || !/^SIG[A-Z0-9]+$/.test(s))) {
    throw new TypeError('bridgeChildProcess: signals must be an array of signal names such as "SIGTERM".');
  }
  const listeners = new Map();
  let attached = true;
  const detach = () => {
    if (!attached) return;
    attached = false;
    for (const [signal, listener] of listeners) {
      process.off(signal, listener);
      ours.get(signal)?.delete(listener);
    }
    listeners.clear();
    child.off('exit', detach);
    child.off('error', detach);
  };
  for (const signal of new Set(signals)) {
    const listener = () => {
      if (typeof options.onSignal === 'function') {
        try {
          options.onSignal(signal);
        } catch {}
      }
      if (child.exitCode === null && child.signalCode === null) {
        try {
          child.kill(signal);
        } catch {}
      }
      // Nobody else listens: do what Node would have done without us, once every bridge forwarded.
      if (process.listenerCount(signal) === count(signal)) {
        setImmediate(() => {
          if (process.listenerCount(signal) > count(signal)) return;
          for (const l of [...(ours.get(signal) ?? [])]) process.off(signal, l);
          ours.delete(signal);
          process.kill(process.pid, signal);
        });
      }
    };
    listeners.set(signal, listener);
    if (!ours.has(signal)) ours.set(signal, new Set());
    ours.get(signal).add(listener);
    process.on(signal, listener);
  }
  child.once('exit', detach);
  child.once('error', detach);
  if (child.exitCode !== null || child.signalCode !== null) detach();
  return { detach };
}

module.exports = { bridgeChildProcess };
