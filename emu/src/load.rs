//! Making a `Module`: parse (`parse/`), contract what the JIT would (`contract.rs`), then
//! analyze (`cas_seed.rs`, `poll.rs`, `stretch.rs`, `regalloc.rs`). Above both, so that neither imports the other.

use crate::error::EmuError;
use crate::module::Module;

impl Module {
    /// Parses NVRTC-style PTX. Errors name the PTX line.
    pub fn parse(ptx: &str) -> Result<Module, EmuError> {
        Self::parse_with_slots(ptx, true)
    }

    /// Parses the PTX of several translation units built with `-rdc=true` as one module, as
    /// nvlink links them (`link.rs`): a kernel may launch or call what another unit defines.
    pub fn parse_linked(units: &[&str]) -> Result<Module, EmuError> {
        match units {
            [one] => Self::parse(one),
            _ => Self::analyzed(
                crate::parse::module_from_tokens(crate::link::link_tokens(units)?)?,
                true,
            ),
        }
    }

    /// [`Module::parse`], with registers that are never live at once sharing a slot or not
    /// (`regalloc.rs`); the two must run alike, which its tests check on every committed kernel.
    pub(crate) fn parse_with_slots(ptx: &str, share_slots: bool) -> Result<Module, EmuError> {
        Self::analyzed(crate::parse::module(ptx)?, share_slots)
    }

    fn analyzed(mut module: Module, share_slots: bool) -> Result<Module, EmuError> {
        crate::contract::contract(&mut module);
        module.cas_seed = crate::cas_seed::analyze(&module);
        module.polls = crate::poll::analyze(&module);
        module.ends_step = crate::stretch::analyze_ends_step(&module);
        module.longest_step = crate::stretch::analyze_longest_step(&module);
        module.stretch = crate::stretch::analyze(&module);
        module.quiet = crate::stretch::analyze_quiet(&module);
        module.exits = crate::stretch::analyze_exits(&module);
        module.straight_to_end = crate::stretch::analyze_straight_to_end(&module);
        module.skips_barrier = crate::stretch::analyze_skips_barrier(&module);
        // Before the registers are renamed: it follows them through the code.
        module.shared_base = crate::shared_base::analyze(&module);
        if share_slots {
            crate::regalloc::compact(&mut module);
        }
        Ok(module)
    }
}
