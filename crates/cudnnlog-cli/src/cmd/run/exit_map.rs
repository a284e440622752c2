//! `run --exit-code-map`: the exit status of a failed command says what to
//! do about it, so that a Kubernetes `podFailurePolicy` (`onExitCodes`)
//! can tell a failure worth retrying from a fatal one.
//!
//! - `retry` exits [`RETRY`] (75, EX_TEMPFAIL of sysexits.h: "temporary
//!   failure; the user is invited to retry");
//! - `stop` exits [`STOP`] (78, EX_CONFIG: the job as configured cannot
//!   succeed; running it again fails the same way);
//! - `investigate`, or a failure without a finding, keeps the command's
//!   own status.
//!
//! Both codes lie outside what commands commonly exit with: 1 and 2
//! (errors, usage), 126 and 127 (the shell's), 128+N (a signal: 137 the
//! OOM killer's SIGKILL, 143 SIGTERM), 255; Python and torchrun exit 1.
//! So that a mapped code always means cudnnlog's verdict, a command's own
//! 75 or 78 that no action maps to becomes 1. A command that succeeded
//! exits 0 whatever its log holds.

/// The status of a failure worth retrying.
pub const RETRY: u8 = 75;
/// The status of a failure that would recur.
pub const STOP: u8 = 78;

/// The exit status for a command that exited with `code` (0: success)
/// when the diagnosis says `action` (`retry`, `stop`, `investigate`).
pub fn mapped(action: Option<&str>, code: u8) -> u8 {
    match (code, action) {
        (0, _) => 0,
        (_, Some("retry")) => RETRY,
        (_, Some("stop")) => STOP,
        (RETRY | STOP, _) => 1,
        (code, _) => code,
    }
}

/// The table `cudnnlog run --exit-code-map` prints without a command.
pub fn table() -> String {
    format!(
        "\
With --exit-code-map, `cudnnlog run` exits, when the command failed:

action        exit status            podFailurePolicy action
retry         {RETRY}                     Ignore (or Count): a transient failure; run the pod again
stop          {STOP}                     FailJob: the same failure would recur; stop the Job
investigate   the command's own      Count: a person should look
no finding    the command's own      Count

{RETRY} is EX_TEMPFAIL and {STOP} EX_CONFIG of sysexits.h. A command's own {RETRY} or {STOP} that
no action maps to exits 1, so the two always mean cudnnlog's verdict. A command that
succeeded exits 0.
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_maps_by_its_action_and_success_stays_zero() {
        assert_eq!(mapped(Some("retry"), 1), RETRY);
        assert_eq!(mapped(Some("retry"), 137), RETRY);
        assert_eq!(mapped(Some("stop"), 1), STOP);
        assert_eq!(mapped(Some("investigate"), 3), 3);
        assert_eq!(mapped(None, 143), 143);
        assert_eq!(mapped(Some("retry"), 0), 0);
        assert_eq!(mapped(Some("stop"), 0), 0);
    }

    #[test]
    fn a_commands_own_mapped_code_is_not_taken_for_a_verdict() {
        assert_eq!(mapped(None, RETRY), 1);
        assert_eq!(mapped(Some("investigate"), STOP), 1);
        assert_eq!(mapped(Some("stop"), RETRY), STOP);
        // No other common status is one of the two.
        for code in [1, 2, 126, 127, 130, 134, 137, 139, 143, 255] {
            assert_ne!(code, RETRY);
            assert_ne!(code, STOP);
        }
    }

    #[test]
    fn the_table_names_both_codes() {
        let t = table();
        assert!(t.contains("retry         75"), "{t}");
        assert!(t.contains("stop          78"), "{t}");
    }
}
