//! Findings as the runtime reports them: the checker's report of the kernel (its `.cu` lines),
//! then the host line of the launch that ran it; or a host-side bug at the line of the call.

use ptx_emu::{Finding, RunReport};

use crate::runtime::{HostFinding, Runtime};
use crate::site::{Place, Site, source_line};

/// How a report names one launch: `histogram<<<(4,1,1), (256,1,1)>>> at histogram.cu:71 (main)`.
#[derive(Clone, Debug)]
pub struct LaunchName {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub site: Option<Site>,
}

impl LaunchName {
    /// `kernel<<<grid, block>>> at file:line`, as findings name their launch.
    pub fn describe(&self, rt: &mut Runtime) -> String {
        let place = rt.place(self.site);
        format!(
            "{}<<<{}, {}>>> at {place}",
            self.kernel,
            dims(self.grid),
            dims(self.block)
        )
    }
}

fn dims(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("({x},{y})"),
        [x, y, z] => format!("({x},{y},{z})"),
    }
}

fn quote(place: &Place) -> String {
    match (&place.file, place.line) {
        (Some(file), Some(line)) => source_line(file, line)
            .map(|text| format!("\n    {line} | {text}"))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn record(rt: &mut Runtime, kind: &str, text: &str, lines: &[u32], host: &Place) {
    rt.findings += 1;
    let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
    let json = format!(
        "{{\"kind\":{},\"lines\":[{}],\"host\":{},\"text\":{}}}",
        json_string(kind),
        lines.join(","),
        host.file_line()
            .map_or_else(|| "null".to_string(), |at| json_string(&at)),
        json_string(text)
    );
    rt.out.record(&json);
}

/// A host-side bug found in the API call `call`, made at `site`.
pub fn host_finding(rt: &mut Runtime, call: &str, site: Option<Site>, finding: HostFinding) {
    let place = rt.place(site);
    let text = format!(
        "{}: {}\n  in {call} at {place}{}",
        finding.kind,
        finding.text,
        quote(&place)
    );
    rt.out.say(&text);
    let lines: Vec<u32> = place.line.into_iter().collect();
    record(rt, finding.kind, &text, &lines, &place);
}

fn kind_name(finding: &Finding) -> String {
    let title = finding.to_string();
    title
        .split([':', '('])
        .next()
        .unwrap_or("finding")
        .trim()
        .to_string()
}

/// What the checkers found in a launch (or in work that ran later, at a synchronization).
/// What stands for a host line in a stream operation's name until a report shows it.
const SITE_MARK: char = '\u{2063}';

/// A stream operation's name in reports: `what at` the host line that queued it, as a mark
/// that [`resolve_sites`] turns into the line (resolving a site reads the program's line
/// tables, which only a report needs). `None` when the call's site is unknown.
pub fn op_label(rt: &mut Runtime, what: &str, site: Option<Site>) -> Option<String> {
    let site = site?;
    let index = match rt.op_sites.iter().position(|s| *s == site) {
        Some(index) => index,
        None => {
            rt.op_sites.push(site);
            rt.op_sites.len() - 1
        }
    };
    Some(format!("{what} at {SITE_MARK}{index}{SITE_MARK}"))
}

/// `text` with each stream operation's site mark replaced by the host line it stands for, and
/// those lines in the order the text names them.
fn resolve_sites(rt: &mut Runtime, text: &str) -> (String, Vec<Place>) {
    let mut parts = text.split(SITE_MARK);
    let mut out = parts.next().unwrap_or_default().to_string();
    let mut places = Vec::new();
    while let Some(index) = parts.next() {
        let site = index
            .parse::<usize>()
            .ok()
            .and_then(|i| rt.op_sites.get(i).copied());
        let place = rt.place(site);
        out.push_str(&place.to_string());
        places.push(place);
        out.push_str(parts.next().unwrap_or_default());
    }
    (out, places)
}

pub fn launch_findings(rt: &mut Runtime, launch: Option<&LaunchName>, report: &RunReport) {
    let place = rt.place(launch.and_then(|l| l.site));
    for finding in &report.findings {
        // Each kernel line quoted under the row that names it, as `racetrack check` does.
        let quoted = finding.quoting(&source_line).to_string();
        let text = crate::site::shorten_paths(&quoted);
        let (resolved, sites) = resolve_sites(rt, &text);
        let mut text = demangle_in(&resolved);
        if let Some(launch) = launch {
            text.push_str(&format!(
                "\n  in the launch of {}<<<{}, {}>>> at {place}{}",
                launch.kernel,
                dims(launch.grid),
                dims(launch.block),
                quote(&place)
            ));
        }
        rt.out.say(&text);
        let kind = kind_name(finding);
        // Work that no launch of the program's ran (a copy checked against the kernels before
        // it) is at the host line of the operation the finding names first.
        let host = match (launch, sites.first()) {
            (None, Some(first)) => first,
            _ => &place,
        };
        record(rt, &kind, &text, &finding.lines(), host);
    }
}

/// Kernel names as the program spells them: the emulator names operations by PTX names.
fn demangle_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("_Z") {
        let at_word_start = start == 0 || !rest.as_bytes()[start - 1].is_ascii_alphanumeric();
        out.push_str(&rest[..start]);
        let word_len = rest[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        if at_word_start {
            out.push_str(&crate::launch::display_name(word));
        } else {
            out.push_str(word);
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
}
