//! Loading content: the embedded `data/*.json` files, parsed once, or lists a configuration replaces.

use crate::content::{Content, ContentError, ContentOverride};
use coffer_core::read_content;
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
        let ships = match &over.ships {
            Some(v) => v.clone(),
            None => read_content("ships.json", SHIPS)?,
        };
        let strategy_cards = match &over.strategy_cards {
            Some(v) => v.clone(),
            None => read_content("strategy_cards.json", CARDS)?,
        };
        let factions = match &over.factions {
            Some(v) => v.clone(),
            None => read_content("factions.json", FACTIONS)?,
        };
        let laws = match &over.laws {
            Some(v) => v.clone(),
            None => read_content("laws.json", LAWS)?,
        };
        let technologies = match &over.technologies {
            Some(v) => v.clone(),
            None => read_content("technologies.json", TECHNOLOGIES)?,
        };
        let agendas = match &over.agendas {
            Some(v) => v.clone(),
            None => read_content("agendas.json", AGENDAS)?,
        };
        let action_cards = match &over.action_cards {
            Some(v) => v.clone(),
            None => read_content("action_cards.json", ACTION_CARDS)?,
        };
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
