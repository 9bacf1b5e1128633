//! The hub's agent card: one skill, `clarify`, over JSON-RPC at `<origin>/a2a`, with a bearer
//! token (an agent token of `agentx tokens new --agent NAME`).

use std::collections::HashMap;
use std::sync::Arc;

use agentx_clarify_a2a::protocol::{
    AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill,
    HttpAuthSecurityScheme, SecurityScheme, TRANSPORT_PROTOCOL_JSONRPC,
};
use axum::extract::State;
use axum::Json;

use crate::hub::App;

pub async fn card(State(app): State<Arc<App>>) -> Json<AgentCard> {
    Json(hub_card(&app.base_url()))
}

pub fn hub_card(origin: &str) -> AgentCard {
    let text = || vec![String::from("text/plain")];
    AgentCard {
        name: String::from("AgentX Clarify"),
        description: String::from(
            "A clarification hub: ask another agent of your team a question on an issue; the \
             hub records it in the issue's ledger, routes it to the target (an agent or a \
             person) and reports the answer.",
        ),
        version: String::from(env!("CARGO_PKG_VERSION")),
        supported_interfaces: vec![AgentInterface::new(
            format!("{origin}/a2a"),
            TRANSPORT_PROTOCOL_JSONRPC,
        )],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: None,
            extended_agent_card: Some(false),
        },
        default_input_modes: text(),
        default_output_modes: text(),
        skills: vec![AgentSkill {
            id: String::from("clarify"),
            name: String::from("Ask a clarification"),
            description: String::from(
                "Ask an agent of the team a question on an issue. The message text is the \
                 question; metadata: to (the agent asked), issue (its number), topic, and \
                 optionally blocking, field, answerKind (text, confirm, choice, multi_choice) \
                 with options. The task is working while the question is open, input-required \
                 when the target asks back (reply on the same task), completed with the answer \
                 as an artifact, canceled when abandoned.",
            ),
            tags: vec![
                String::from("clarification"),
                String::from("question"),
                String::from("agentx"),
            ],
            examples: Some(vec![String::from(
                "Which cache should the session store use? (metadata: to=architect, issue=42, topic=Cache layer)",
            )]),
            input_modes: Some(text()),
            output_modes: Some(text()),
            security_requirements: None,
        }],
        provider: Some(AgentProvider {
            url: String::from("https://github.com/agentx/clarify"),
            organization: String::from("AgentX"),
        }),
        documentation_url: None,
        icon_url: None,
        security_schemes: Some(HashMap::from([(
            String::from("bearer"),
            SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: String::from("Bearer"),
                description: Some(String::from(
                    "an agent token: agentx tokens new --agent NAME",
                )),
                bearer_format: None,
            }),
        )])),
        security_requirements: Some(vec![HashMap::from([(
            String::from("bearer"),
            Vec::new(),
        )])]),
        signatures: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_card_reads_back_with_the_official_types() {
        let card = hub_card("http://127.0.0.1:7700");
        let text = serde_json::to_string(&card).unwrap();
        let back: AgentCard = serde_json::from_str(&text).unwrap();
        assert_eq!(back, card);
        assert_eq!(
            back.supported_interfaces[0].url,
            "http://127.0.0.1:7700/a2a"
        );
        assert_eq!(back.supported_interfaces[0].protocol_version, "1.0");
        assert_eq!(back.skills[0].id, "clarify");
        assert!(!back.skills[0].tags.is_empty());
    }
}
