//! The `[y/N]` confirmation every change to `seal.json` needs (SPEC
//! §Interactive Supervision). The question goes to stderr, one line is read
//! from stdin; only `y` or `yes` (any case, surrounding blanks ignored) accept.
//! End of input, a read error or anything else declines. There is no flag to
//! skip this, and none will be added.

use std::io::{self, BufRead, Write};

/// Asks `question` and reads the answer from stdin.
pub fn confirm(question: &str) -> bool {
    let mut err = io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => {
            sayln!();
            false
        }
        Ok(_) => is_yes(&line),
    }
}

/// True for an accepting answer.
pub fn is_yes(answer: &str) -> bool {
    let a = answer.trim();
    a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes")
}

#[cfg(test)]
mod tests {
    #[test]
    fn answers() {
        for yes in ["y", "Y", "yes", "YES", " yEs \n", "y\r\n"] {
            assert!(super::is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "no", "yy", "ye", "yes please", "oui"] {
            assert!(!super::is_yes(no), "{no:?}");
        }
    }
}
