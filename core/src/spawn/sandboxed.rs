//! Hooking a prepared sandbox into a spawn: on Linux the child applies the sandbox's plan after its
//! own setup (session, controlling terminal) and before exec; elsewhere the sandbox wraps the shell
//! instead (see `Armed::shell_wrapper`) and there is nothing to do here.

/// Add the sandbox's child step to `cmd`, after the steps already registered.
#[cfg(target_os = "linux")]
pub fn enter_in_child(cmd: &mut tokio::process::Command, sandbox: Option<&crate::sandbox::Armed>) {
    if let Some(s) = sandbox {
        s.await_handover();
        let plan = s.child_plan();
        // The forked child's copy of the plan cannot be released from here once it ran, so a forked
        // child makes its namespaces itself.
        plan.release_premade();
        // SAFETY: `apply` makes only system calls on data prepared before the fork.
        unsafe {
            cmd.pre_exec(move || plan.apply());
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn enter_in_child(
    _cmd: &mut tokio::process::Command,
    _sandbox: Option<&crate::sandbox::Armed>,
) {
}
