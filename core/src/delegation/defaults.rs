//! Example capability manifests for the default agents, as `agentx init` writes them to
//! `.agentx/agents/<name>.toml`.

pub(super) const PRODUCT_MANAGER_TOML: &str = r#"# Capability manifest of product-manager (what it can be delegated; docs/protocol.md §18).
# Capability names are dotted; a name covers the names below it. Exclusions win.
version = "1.0.0"
role = "Product manager: requirements, scope and acceptance criteria"
interface = ["working-file", "summary-block"]   # accepted delegation types
max_depth = "learning"                          # quick | learning | deep
exclusions = ["code.implementation"]

[[capabilities]]
name = "product.requirements.clarify"
confidence = 0.9
constraints = ["Needs the issue and its acceptance criteria"]
latency_weight = 1.0

[[capabilities]]
name = "product.scope.prioritize"
confidence = 0.85
latency_weight = 1.0
"#;

pub(super) const ARCHITECT_TOML: &str = r#"# Capability manifest of architect (what it can be delegated; docs/protocol.md §18).
# Capability names are dotted; a name covers the names below it. Exclusions win.
version = "1.0.0"
role = "Architect: system design, interfaces and technical decisions"
interface = ["working-file", "summary-block"]   # accepted delegation types
max_depth = "deep"                              # quick | learning | deep
exclusions = ["code.implementation"]

[[capabilities]]
name = "architecture.design.system"
confidence = 0.9
constraints = ["Needs the requirements and the current architecture notes"]
latency_weight = 1.4

[[capabilities]]
name = "architecture.review.tradeoffs"
confidence = 0.85
latency_weight = 1.2
"#;

pub(super) const ENGINEER_TOML: &str = r#"# Capability manifest of engineer (what it can be delegated; docs/protocol.md §18).
# Capability names are dotted; a name covers the names below it. Exclusions win.
version = "1.0.0"
role = "Engineer: implementation, tests and fixes"
interface = ["working-file"]                    # accepted delegation types
max_depth = "deep"                              # quick | learning | deep
exclusions = ["architecture.design"]

[[capabilities]]
name = "code.implementation"
confidence = 0.9
constraints = ["Needs an agreed design for anything beyond one module"]
latency_weight = 1.0

[[capabilities]]
name = "code.tests.write"
confidence = 0.9
latency_weight = 0.8
"#;

/// `(agent, file text)` for every default manifest.
pub const DEFAULT_MANIFESTS: [(&str, &str); 3] = [
    ("product-manager", PRODUCT_MANAGER_TOML),
    ("architect", ARCHITECT_TOML),
    ("engineer", ENGINEER_TOML),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delegation::{Manifest, Offer};

    #[test]
    fn default_manifests_parse() {
        for (agent, text) in DEFAULT_MANIFESTS {
            let m = Manifest::parse(&format!("{agent}.toml"), agent, text).unwrap();
            assert_eq!(m.capabilities.len(), 2, "{agent}");
        }
        let engineer = Manifest::parse("engineer.toml", "engineer", ENGINEER_TOML).unwrap();
        assert!(matches!(
            engineer.offers("code.implementation.feature"),
            Offer::Offered(_)
        ));
        assert_eq!(
            engineer.offers("architecture.design.system"),
            Offer::Excluded("architecture.design")
        );
    }
}
