//! What the binaries print around their results and how they end: the date and commit of a run,
//! an error as one line with its exit status, and the immediate exit after a kernel hung or
//! trapped. The statuses themselves are `pipeline_suite::exit`.

use std::io::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

/// The commit the binary was built from (`GPU_PIPELINE_COMMIT`, set by the xtask).
pub fn commit() -> &'static str {
    option_env!("GPU_PIPELINE_COMMIT").unwrap_or("unknown (built outside the xtask)")
}

/// Today's UTC date as `YYYY-MM-DD` (civil-from-days, proleptic Gregorian).
pub fn utc_date() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Prints `error: {message}` (one line on stderr) and returns the exit status `code`.
pub fn error(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

/// Ends the process at once with `code`, after flushing stdout: no destructor runs, since
/// dropping a CUDA context whose kernel hung (or trapped) may block forever.
pub fn exit_now(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    // SAFETY: ends the process without running destructors or atexit handlers; nothing left
    // undone matters to the caller (stdout is flushed above, stderr is unbuffered).
    unsafe { libc::_exit(code.into()) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_date_has_the_iso_form() {
        let date = super::utc_date();
        let parts: Vec<&str> = date.split('-').collect();
        assert_eq!(parts.len(), 3, "{date}");
        assert!(parts[0].parse::<u32>().unwrap() >= 2024, "{date}");
        assert!(
            (1..=12).contains(&parts[1].parse::<u32>().unwrap()),
            "{date}"
        );
        assert!(
            (1..=31).contains(&parts[2].parse::<u32>().unwrap()),
            "{date}"
        );
    }
}
