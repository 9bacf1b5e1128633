//! The server's log: one line on stderr per event worth telling the person who started it.

/// One log line on stderr. Callers never pass a token, cookie or code.
pub fn line(text: &str) {
    let now = agentx_clarify_core::time::format_ms(agentx_clarify_store::clock::system_now_ms());
    eprintln!("{now} agentx serve: {text}");
}
