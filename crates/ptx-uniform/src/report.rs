//! What the check returns: a report per entry with its findings, the errors, and their text.

use std::fmt;

/// What the check found in one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryReport {
    /// The entry's name.
    pub entry: String,
    /// Basic blocks.
    pub blocks: usize,
    /// Conditional branches (and guarded `ret`/`exit`).
    pub branches: usize,
    /// Those whose predicate may differ within a warp.
    pub lane_divergent: usize,
    /// Those warp-uniform but possibly different between the warps of a warpgroup.
    pub warp_divergent: usize,
    /// `.aligned` instructions checked (`wgmma.*` included).
    pub aligned: usize,
    /// `wgmma.mma_async` instructions.
    pub wgmmas: usize,
    /// The `.aligned` instructions on a path less uniform than they need, in line order.
    pub findings: Vec<Finding>,
}

/// The threads that must execute an `.aligned` instruction together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The warp (32 threads): `bar.sync`, `barrier.*.aligned` and every other `.aligned` form.
    Warp,
    /// The warpgroup (128 threads, four consecutive warps): `wgmma.*`, `setmaxnreg`.
    Warpgroup,
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Group::Warp => "warp",
            Group::Warpgroup => "warpgroup",
        })
    }
}

/// An `.aligned` instruction that part of its group may skip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its line in the module (1-based).
    pub line: usize,
    /// Its opcode with modifiers (`wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16`).
    pub op: String,
    /// Who must execute it together.
    pub group: Group,
    /// Why the analysis cannot show that they do.
    pub why: Why,
}

/// Why an `.aligned` instruction may be executed by part of its group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The instruction's own guard (`@%p`) may differ within the group.
    Guard {
        /// The guard register (with its inline-assembly scope where it has one).
        register: String,
    },
    /// The instruction's block is control-dependent on a branch whose predicate may differ.
    ControlDependent {
        /// The branch's line in the module.
        line: usize,
        /// The branch, with its whitespace collapsed.
        branch: String,
        /// The branch's predicate register.
        predicate: String,
    },
    /// The block is divergent for a reason the analysis did not record (not expected to occur;
    /// kept so that such a block is still an error).
    DivergentPath,
}

impl fmt::Display for Finding {
    /// `line N: `op` must be executed by the whole warp together, but ...` (the entry is the
    /// caller's to name).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = self.group;
        write!(
            f,
            "line {}: `{}` must be executed by the whole {group} together, but ",
            self.line, self.op
        )?;
        match &self.why {
            Why::Guard { register } => {
                write!(f, "its guard `{register}` may differ within a {group}")
            }
            Why::ControlDependent {
                line,
                branch,
                predicate,
            } => write!(
                f,
                "it is control-dependent on line {line}: `{branch}`, whose predicate `{predicate}` may differ within a {group}"
            ),
            Why::DivergentPath => f.write_str("it is on a divergent path"),
        }
    }
}

/// A module the check cannot analyse: the message names the entry, the line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub(crate) String);

impl ParseError {
    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

impl From<String> for ParseError {
    fn from(message: String) -> Self {
        ParseError(message)
    }
}

/// Why [`check`](crate::check) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The module could not be analysed.
    Parse(ParseError),
    /// Some entry has a finding: every entry's report, clean ones included.
    Divergent(Vec<EntryReport>),
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Error::Parse(e)
    }
}

impl fmt::Display for Error {
    /// A parse error's message, or one line per finding:
    /// `PTX entry `k` line N: `op` must be executed by the whole warp together, but ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse(e) => e.fmt(f),
            Error::Divergent(reports) => {
                let mut first = true;
                for r in reports {
                    for finding in &r.findings {
                        if !first {
                            f.write_str("\n")?;
                        }
                        first = false;
                        write!(f, "PTX entry `{}` {finding}", r.entry)?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}

impl fmt::Display for EntryReport {
    /// One line of counts, then one indented line per finding:
    ///
    /// ```text
    /// entry k: 3 blocks, 1 branches (1 lane-divergent, 0 only warp-uniform), 4 .aligned (1 wgmma.mma_async), 4 findings
    ///   line 20: `wgmma.fence.sync.aligned` must be executed by the whole warpgroup together, but ...
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "entry {}: {} blocks, {} branches ({} lane-divergent, {} only warp-uniform), {} .aligned ({} wgmma.mma_async), {} findings",
            self.entry,
            self.blocks,
            self.branches,
            self.lane_divergent,
            self.warp_divergent,
            self.aligned,
            self.wgmmas,
            self.findings.len()
        )?;
        for finding in &self.findings {
            write!(f, "\n  {finding}")?;
        }
        Ok(())
    }
}

/// The text of [`analyse`](crate::analyse)'s result for `ptx`: each entry's report
/// ([`EntryReport`]'s `Display`), or `error: ` and the parse error's message. This is the form of
/// the fixtures' expected reports (`tests/fixtures/*.expected`).
pub fn render(ptx: &str) -> String {
    match crate::analyse(ptx) {
        Ok(reports) => {
            let mut s = String::new();
            for r in reports {
                s.push_str(&r.to_string());
                s.push('\n');
            }
            s
        }
        Err(e) => format!("error: {e}\n"),
    }
}
