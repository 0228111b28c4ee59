//! Loading content: the embedded `data/*.json` files, parsed once, or lists a configuration replaces.

use crate::content::{Content, ContentError, ContentOverride};
use coffer_core::read_content;
use serde::de::DeserializeOwned;
use std::borrow::Cow;
use std::sync::OnceLock;

const SHIPS: &str = include_str!("../../data/ships.json");
const CARDS: &str = include_str!("../../data/strategy_cards.json");
const FACTIONS: &str = include_str!("../../data/factions.json");
const LAWS: &str = include_str!("../../data/laws.json");
const TECHNOLOGIES: &str = include_str!("../../data/technologies.json");
const AGENDAS: &str = include_str!("../../data/agendas.json");
const ACTION_CARDS: &str = include_str!("../../data/action_cards.json");

impl Content {
    /// The embedded content (`data/*.json`).
    ///
    /// # Errors
    /// [`ContentError`] if an embedded file is invalid (a build defect, covered by a test).
    pub fn embedded() -> Result<Content, ContentError> {
        Content::with_override(&ContentOverride::default())
    }

    /// The content a configuration plays with: the embedded content (parsed once per process and
    /// shared) or, when the configuration overrides lists, the embedded content with those replaced.
    ///
    /// # Errors
    /// [`ContentError`] naming the file, entry and field of the first problem.
    pub fn of(over: Option<&ContentOverride>) -> Result<Cow<'static, Content>, ContentError> {
        static EMBEDDED: OnceLock<Result<Content, ContentError>> = OnceLock::new();
        match over {
            Some(over) => Content::with_override(over).map(Cow::Owned),
            None => EMBEDDED
                .get_or_init(Content::embedded)
                .as_ref()
                .map(Cow::Borrowed)
                .map_err(Clone::clone),
        }
    }

    /// The embedded content with some lists replaced.
    ///
    /// # Errors
    /// [`ContentError`] naming the file, entry and field of the first problem.
    pub fn with_override(over: &ContentOverride) -> Result<Content, ContentError> {
        let ships = replaced_or_embedded(&over.ships, "ships.json", SHIPS)?;
        let strategy_cards =
            replaced_or_embedded(&over.strategy_cards, "strategy_cards.json", CARDS)?;
        let factions = replaced_or_embedded(&over.factions, "factions.json", FACTIONS)?;
        let laws = replaced_or_embedded(&over.laws, "laws.json", LAWS)?;
        let technologies =
            replaced_or_embedded(&over.technologies, "technologies.json", TECHNOLOGIES)?;
        let agendas = replaced_or_embedded(&over.agendas, "agendas.json", AGENDAS)?;
        let action_cards =
            replaced_or_embedded(&over.action_cards, "action_cards.json", ACTION_CARDS)?;
        let content = Content {
            ships,
            strategy_cards,
            factions,
            laws,
            technologies,
            agendas,
            action_cards,
        };
        content.validate()?;
        Ok(content)
    }

    /// Parses one content list from JSON text, for tests and tools (`file` is one of `ships.json`,
    /// `strategy_cards.json`, `factions.json`, `laws.json`, `technologies.json`, `agendas.json`,
    /// `action_cards.json`) and validates the whole content with it.
    ///
    /// # Errors
    /// [`ContentError`].
    pub fn with_file(file: &str, text: &str) -> Result<Content, ContentError> {
        let mut over = ContentOverride::default();
        match file {
            "ships.json" => over.ships = Some(read_content("ships.json", text)?),
            "strategy_cards.json" => {
                over.strategy_cards = Some(read_content("strategy_cards.json", text)?)
            }
            "factions.json" => over.factions = Some(read_content("factions.json", text)?),
            "laws.json" => over.laws = Some(read_content("laws.json", text)?),
            "technologies.json" => {
                over.technologies = Some(read_content("technologies.json", text)?)
            }
            "agendas.json" => over.agendas = Some(read_content("agendas.json", text)?),
            "action_cards.json" => {
                over.action_cards = Some(read_content("action_cards.json", text)?)
            }
            other => {
                return Err(ContentError::parse(
                    "content",
                    format!("unknown content file '{other}'"),
                ));
            }
        }
        Content::with_override(&over)
    }
}

/// A list the configuration replaces, or the embedded one parsed from `text` (`file` names it in errors).
fn replaced_or_embedded<T: Clone + DeserializeOwned>(
    over: &Option<Vec<T>>,
    file: &'static str,
    text: &str,
) -> Result<Vec<T>, ContentError> {
    match over {
        Some(v) => Ok(v.clone()),
        None => read_content(file, text),
    }
}
