//! The email sink (docs/notifications.md "Email"): one `multipart/alternative` mail per event
//! over SMTP, STARTTLS required (or TLS from the first byte), through lettre on rustls. The
//! public roots are trusted, and a sink's `ca_file` beside them. `Message-ID` is the event's
//! (a retry sends the same mail); `In-Reply-To` and `References` name the record, so its
//! mails thread together. Errors name the host only, never a credential.

use agentx_clarify_core::notify::config::Email;
use agentx_clarify_core::notify::Sink;
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{Message, SmtpTransport, Transport};

use crate::{SendError, HTTP_TIMEOUT};

/// The rendered mail, as the core made it.
pub struct Mail<'a> {
    pub event: &'a str,
    pub subject: &'a str,
    pub text: &'a str,
    pub html: &'a str,
    pub thread: &'a str,
}

/// `<id@agentx-clarify>` of an event or a record id (`[A-Za-z0-9_-]`; anything else dropped).
fn message_id(id: &str) -> String {
    let kept: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    format!("<{kept}@agentx-clarify>")
}

fn mailbox(address: &str) -> Result<Mailbox, SendError> {
    address
        .parse()
        .map_err(|e| SendError::Config(format!("'{address}' is not a mail address: {e}")))
}

fn message(email: &Email, mail: &Mail<'_>) -> Result<Message, SendError> {
    if email.to.is_empty() {
        // `to` named only people, and none of them has an `email` in people.toml.
        return Err(SendError::Config(
            "nobody to send to: the people in `to` have no email in .agentx/people.toml".into(),
        ));
    }
    let mut builder = Message::builder()
        .from(mailbox(&email.from)?)
        .subject(mail.subject)
        .message_id(Some(message_id(mail.event)))
        .in_reply_to(message_id(mail.thread))
        .references(message_id(mail.thread));
    for to in &email.to {
        builder = builder.to(mailbox(to)?);
    }
    builder
        .multipart(MultiPart::alternative_plain_html(
            mail.text.to_owned(),
            mail.html.to_owned(),
        ))
        .map_err(|e| SendError::Config(format!("the mail cannot be built: {e}")))
}

fn transport(
    sink: &Sink,
    email: &Email,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<SmtpTransport, SendError> {
    let failed = |e: &dyn std::fmt::Display| SendError::Config(format!("TLS settings: {e}"));
    let mut tls = TlsParameters::builder(email.host.clone());
    if let Some(path) = &email.ca_file {
        // Not the workspace's reader: a CA file is the system's (often a link under
        // /etc/ssl/certs), outside the workspace, named by whoever wrote the settings.
        let pem = std::fs::read(path)
            .map_err(|e| SendError::Config(format!("cannot read ca_file {path}: {e}")))?;
        tls = tls.add_root_certificate(Certificate::from_pem(&pem).map_err(|e| failed(&e))?);
    }
    let tls = tls.build_rustls().map_err(|e| failed(&e))?;
    let mut builder = SmtpTransport::builder_dangerous(&email.host)
        .port(email.port)
        .timeout(Some(HTTP_TIMEOUT))
        .tls(if email.tls == "tls" {
            Tls::Wrapper(tls)
        } else {
            Tls::Required(tls)
        });
    if let (Some(user), Some(pass)) = (&email.username_env, &email.password_env) {
        let read = |name: &str| {
            env(name).filter(|v| !v.is_empty()).ok_or_else(|| {
                SendError::Config(format!(
                    "the SMTP credentials of sink \"{}\" are read from {name}, which is not set",
                    sink.name
                ))
            })
        };
        builder = builder.credentials(Credentials::new(read(user)?, read(pass)?));
    }
    Ok(builder.build())
}

/// Sends the mail once; `env` reads the credentials' variables.
pub fn send(
    sink: &Sink,
    mail: &Mail<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), SendError> {
    let Some(email) = &sink.email else {
        return Err(SendError::Config(format!(
            "the sink \"{}\" has no SMTP settings",
            sink.name
        )));
    };
    let message = message(email, mail)?;
    transport(sink, email, env)?
        .send(&message)
        .map(|_| ())
        .map_err(|e| {
            // lettre's text names the server's answer or the connection's failure, never the
            // credentials.
            SendError::Failed(format!("SMTP {}:{}: {e}", email.host, email.port))
        })
}
