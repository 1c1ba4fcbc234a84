//! Delivers output chunks to a JS callback without flooding the event loop.
//!
//! At most one call is queued on the event loop at a time; chunks that arrive meanwhile are merged
//! (consecutive chunks of the same stream become one, up to [`MAX_CHUNK_BYTES`]) and sent when the
//! previous call returned, so JS never gets a string big enough to stall it. The queue is bounded: if
//! JS falls behind by more than [`MAX_QUEUED_BYTES`], the oldest queued text is dropped and the next
//! chunk reports how much in `dropped`. The session's own buffers are unaffected.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use tokio::sync::Notify;

use crate::output::Stream;

pub const MAX_QUEUED_BYTES: usize = 256 << 10;
pub const MAX_CHUNK_BYTES: usize = 16 << 10;

#[napi(object)]
#[derive(Clone, Debug)]
pub struct OutputChunk {
    pub session_id: String,
    #[napi(ts_type = "'stdout' | 'stderr'")]
    pub stream: String,
    pub text: String,
    /// The last 2000 characters of the session's aggregated output after this chunk.
    pub tail: String,
    /// Characters dropped before this chunk because the callback fell behind.
    pub dropped: Option<u32>,
}

/// A weak tsfn: a pending callback never keeps Node alive on its own.
pub type OutputFn = ThreadsafeFunction<OutputChunk, (), OutputChunk, Status, false, true>;

#[derive(Default)]
struct Queue {
    chunks: VecDeque<(Stream, String)>,
    session_id: String,
    tail: String,
    bytes: usize,
    dropped: usize,
    in_flight: bool,
}

pub struct OutputForwarder {
    tsfn: OutputFn,
    queue: Mutex<Queue>,
    idle: Notify,
}

impl OutputForwarder {
    pub fn new(tsfn: OutputFn) -> Arc<Self> {
        Arc::new(OutputForwarder {
            tsfn,
            queue: Mutex::new(Queue::default()),
            idle: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn push(self: &Arc<Self>, session: &crate::session::Session, stream: Stream, text: &str) {
        let tail = session.lock().collector.tail();
        let start = {
            let mut q = self.lock();
            if q.session_id.is_empty() {
                q.session_id = session.meta.id.clone();
            }
            q.tail = tail;
            match q.chunks.back_mut() {
                Some((s, t)) if *s == stream && t.len() + text.len() <= MAX_CHUNK_BYTES => {
                    t.push_str(text)
                }
                _ => q.chunks.push_back((stream, text.to_string())),
            }
            q.bytes += text.len();
            while q.bytes > MAX_QUEUED_BYTES && q.chunks.len() > 1 {
                let (_, old) = q.chunks.pop_front().expect("len > 1");
                q.bytes -= old.len();
                q.dropped += old.chars().map(char::len_utf16).sum::<usize>();
            }
            !std::mem::replace(&mut q.in_flight, true)
        };
        if start {
            self.send_next();
        }
    }

    fn send_next(self: &Arc<Self>) {
        let chunk = {
            let mut q = self.lock();
            match q.chunks.pop_front() {
                Some((stream, text)) => {
                    q.bytes -= text.len();
                    let dropped = std::mem::take(&mut q.dropped);
                    OutputChunk {
                        session_id: q.session_id.clone(),
                        stream: stream.as_str().to_string(),
                        text,
                        tail: q.tail.clone(),
                        dropped: (dropped > 0).then_some(dropped as u32),
                    }
                }
                None => {
                    q.in_flight = false;
                    drop(q);
                    self.idle.notify_waiters();
                    return;
                }
            }
        };
        let me = self.clone();
        let status = self.tsfn.call_with_return_value(
            chunk,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |_ret: Result<()>, _env| {
                // A throwing callback must not stop delivery of the chunks after it. The next chunk is
                // queued from the runtime a moment later, not from here: napi drains calls queued during
                // its own drain in the same turn, and a flood would then never let timers run.
                napi::bindgen_prelude::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                    me.send_next();
                });
                Ok(())
            },
        );
        if status != Status::Ok {
            // The environment is going away: nothing will deliver the rest.
            let mut q = self.lock();
            q.chunks.clear();
            q.bytes = 0;
            q.in_flight = false;
            drop(q);
            self.idle.notify_waiters();
        }
    }

    /// Resolves when every queued chunk was handed to JS.
    pub async fn flushed(&self) {
        loop {
            let notified = self.idle.notified();
            if !self.lock().in_flight {
                return;
            }
            notified.await;
        }
    }
}
