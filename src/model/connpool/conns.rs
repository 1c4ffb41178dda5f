//! The pool's connections and its idle stacks: every connection by id (its setting), the
//! clean stack and one stack per setting, both LIFO (vitessio/vitess
//! `go/pools/smartconnpool/pool.go` `ConnPool.Get`, `getFromSettingsStack`), and the count of
//! connections that exist (`active`) against `capacity`.

/// One MySQL connection of the pool.
#[derive(Clone, Copy, Debug)]
pub struct Conn {
    /// Its current setting (0: none/clean).
    pub(crate) setting: u8,
}

/// The connections and the idle stacks.
#[derive(Debug)]
pub struct Conns {
    /// `capacity`: the most connections that may exist.
    pub(super) capacity: u32,
    /// Every connection ever created (closed ones are reused through `free_conns`).
    pub(crate) all: Vec<Conn>,
    /// Slots of closed connections, for reuse.
    pub(super) free_conns: Vec<u32>,
    /// The clean stack (LIFO).
    pub(super) clean: Vec<u32>,
    /// Per-setting stacks, indexed by setting (0 unused).
    pub(super) setting_stacks: Vec<Vec<u32>>,
    /// The setting stack pushed last (`getFromSettingsStack` starts there).
    pub(super) fresh_settings: usize,
    /// Connections that exist (`active`).
    pub(crate) active: u32,
}

impl Conns {
    /// No connection yet; `nsettings` settings (0: none), at most `capacity` connections.
    pub(super) fn new(capacity: u32, nsettings: usize) -> Self {
        Conns {
            capacity,
            all: Vec::with_capacity(capacity as usize),
            free_conns: Vec::new(),
            clean: Vec::with_capacity(capacity as usize),
            setting_stacks: vec![Vec::new(); nsettings.max(1)],
            fresh_settings: 1,
            active: 0,
        }
    }

    /// Connection `c`'s setting.
    #[inline]
    pub(super) fn setting(&self, c: u32) -> u8 {
        self.all[c as usize].setting
    }

    /// A new clean connection (`active++`), in a reused slot if there is one.
    pub(super) fn new_conn(&mut self) -> u32 {
        self.active += 1;
        match self.free_conns.pop() {
            Some(c) => {
                self.all[c as usize] = Conn { setting: 0 };
                c
            }
            None => {
                self.all.push(Conn { setting: 0 });
                (self.all.len() - 1) as u32
            }
        }
    }

    /// Connection `c` no longer exists (`active--`); its slot is reused.
    pub(super) fn close(&mut self, c: u32) {
        self.active -= 1;
        self.free_conns.push(c);
    }

    pub(super) fn pop_any_settings_stack(&mut self) -> Option<u32> {
        let n = self.setting_stacks.len();
        for k in 0..n.saturating_sub(1) {
            let i = 1 + (self.fresh_settings - 1 + k) % (n - 1);
            if let Some(c) = self.setting_stacks[i].pop() {
                return Some(c);
            }
        }
        None
    }

    pub(super) fn pop_any(&mut self) -> Option<u32> {
        self.clean.pop().or_else(|| self.pop_any_settings_stack())
    }

    /// Connection `c` back on the stack of its setting.
    #[inline]
    pub(super) fn stack_push(&mut self, c: u32) {
        let st = self.all[c as usize].setting as usize;
        if st == 0 {
            self.clean.push(c);
        } else {
            self.setting_stacks[st].push(c);
            self.fresh_settings = st;
        }
    }

    /// The wanted setting's stack, or the clean stack for no setting, has a connection.
    #[inline]
    pub(super) fn has_idle(&self, setting: u8) -> bool {
        if setting == 0 {
            !self.clean.is_empty()
        } else {
            !self.setting_stacks[setting as usize].is_empty()
        }
    }
}
