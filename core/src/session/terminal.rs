//! A session's terminal: a PTY master on this machine (a ConPTY on Windows), or the terminal a
//! container engine made for a run's exec. The session reads, writes and resizes it the same way.

use std::sync::Arc;

use crate::container::ContainerTty;
use crate::error::{AgentError, ErrorCode};
use crate::spawn::pty::PtyMaster;
use crate::spawn::request::PtySize;

#[derive(Clone)]
pub(crate) enum Terminal {
    Local(Arc<PtyMaster>),
    Container(Arc<ContainerTty>),
}

impl Terminal {
    /// Output; `Ok(0)` at its end.
    pub async fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Terminal::Local(m) => m.read(buf).await,
            Terminal::Container(t) => t.read(buf).await,
        }
    }

    pub async fn write_all(&self, data: &[u8]) -> std::io::Result<()> {
        match self {
            Terminal::Local(m) => m.write_all(data).await,
            Terminal::Container(t) => t.write_all(data).await,
        }
    }

    /// A new size (the application gets SIGWINCH); `id` names the session in the error.
    pub async fn resize(&self, size: PtySize, id: &str) -> Result<(), AgentError> {
        match self {
            Terminal::Local(m) => m.resize(size).map_err(|e| {
                AgentError::new(
                    ErrorCode::Internal,
                    format!("Resizing session {id} failed: {e}."),
                )
            }),
            Terminal::Container(t) => t.resize(size).await,
        }
    }
}
