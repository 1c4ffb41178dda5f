//! The MySQL servers behind the proxy, as their truth: up, killed or black-holed, their
//! `read_only`, and the epoch that breaks the connections opened before a kill or a restart.

/// What a connect to a host meets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostState {
    /// Serving.
    Up,
    /// Killed: connects fail fast (DNS name gone / refused), connections break.
    Refused,
    /// Black-holed: connects time out, queries on open connections hang.
    Dark,
}

/// One MySQL server.
#[derive(Clone, Debug)]
pub struct Host {
    /// Up, killed or black-holed.
    pub(crate) state: HostState,
    /// `@@global.read_only`.
    pub(crate) read_only: bool,
    /// Incremented at every kill, black-hole and start: connections of older epochs are broken.
    pub(crate) epoch: u32,
}
