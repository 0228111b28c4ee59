//! Actions in words, for refusals and descriptions: "a tactical action in system 18".

use crate::actions::Action;
use crate::ids::Pool;
use crate::state::State;
use crate::words::count;

impl State {
    /// An action in words, for refusals: "a tactical action in system 18".
    pub fn action_text(&self, action: &Action) -> String {
        match *action {
            Action::Pick { card } => format!("picking {}", self.card_name(card)),
            Action::Tactical { system } => {
                format!("a tactical action in {}", self.system_name(system))
            }
            Action::Produce { class } => format!("producing a {}", self.class_name(class)),
            Action::Done => "ending production".into(),
            Action::Strategic { card } => {
                format!("the strategic action of {}", self.card_name(card))
            }
            Action::Pass => "passing".into(),
            Action::Gain { pool } => {
                format!("putting a gained command token in the {}", pool.name())
            }
            Action::Buy { influence } => {
                format!("spending {influence} influence on command tokens")
            }
            Action::Secondary => "resolving a secondary ability".into(),
            Action::Decline => "declining a secondary ability".into(),
            Action::Diplomacy { system } => format!(
                "choosing {} for the other players' tokens",
                self.system_name(system)
            ),
            Action::Fallback { pool } => {
                format!("placing a command token from the {}", pool.name())
            }
            Action::RemoveToken { system } => {
                format!("removing a command token from {}", self.system_name(system))
            }
            Action::Place { system, fallback } => match fallback {
                None => format!("placing a command token in {}", self.system_name(system)),
                Some(pool) => format!(
                    "placing a command token from the {} in {}",
                    pool.name(),
                    self.system_name(system)
                ),
            },
            Action::Redistribute {
                tactic,
                fleet,
                strategy,
            } => format!(
                "redistributing the command sheet as {tactic} tactic, {fleet} fleet and {strategy} strategy"
            ),
            Action::RemoveShip { system, class } => format!(
                "removing a {} from {}",
                self.class_name(class),
                self.system_name(system)
            ),
            Action::Move {
                from,
                class,
                fighters,
            } => self.move_text(from, class, fighters),
            Action::EndMovement => "ending movement".into(),
            Action::AnnounceRetreat => "announcing a retreat".into(),
            Action::NoRetreat => "announcing no retreat".into(),
            Action::Roll { hits } => {
                format!("a combat roll of {}", count(u32::from(hits), "hit", "hits"))
            }
            Action::Destroy { class } => format!("destroying a {}", self.class_name(class)),
            Action::Eliminate { player } => format!("eliminating p{player}"),
            Action::RevealAgenda { agenda: Some(a) } => format!(
                "revealing {}",
                self.rules
                    .agendas
                    .get(usize::from(a))
                    .map_or_else(|| format!("agenda #{a}"), |x| x.name.clone())
            ),
            Action::RevealAgenda { agenda: None } => {
                "revealing an agenda that does nothing to command tokens".into()
            }
            Action::ComponentAction { ability } => {
                match self.rules.abilities.get(usize::from(ability)) {
                    Some(a) => format!("using {}", a.name),
                    None => format!("using component action #{ability}"),
                }
            }
            Action::PlayCard {
                card,
                player,
                system,
                ..
            } => self.card_play_text(card, player, system),
            Action::NoCard => "playing no action card".into(),
            Action::UseAbility {
                ability,
                system,
                pool,
            } => self.ability_use_text(ability, system, pool),
            Action::NoReaction => "using no ability".into(),
            Action::SwapCards { give, take } => format!(
                "giving {} and taking {}",
                self.card_name(give),
                self.card_name(take)
            ),
            Action::Recombine { player } => format!("naming p{player} before votes are cast"),
            Action::Prerequisites { count } => {
                format!(
                    "entering {} of the technology gained",
                    self::count(u32::from(count), "prerequisite", "prerequisites")
                )
            }
            Action::Quash => "quashing the agenda".into(),
            Action::NoQuash => "letting the agenda stand".into(),
            Action::ElectCard { card } => format!("electing {}", self.card_name(card)),
            Action::AdditionalAction { system } => format!(
                "discarding Minister of War to return the command token in {} and act again",
                self.system_name(system)
            ),
            Action::Outcome { vote, .. } => match vote {
                crate::config::Vote::For => "resolving the agenda For".into(),
                crate::config::Vote::Against => "resolving the agenda Against".into(),
            },
            Action::Elect { player } => format!("electing p{player}"),
            Action::ReturnToken { pool } => format!(
                "returning a command token from the {} to reinforcements",
                pool.name()
            ),
            Action::StarForge { system, class } => format!(
                "Star Forge placing {} in {}",
                self.class_name(class),
                self.system_name(system)
            ),
            Action::Release { player } => {
                format!("returning a command token of p{player}'s from the fleet pool")
            }
            Action::Retreat { system, fallback } => match fallback {
                None => format!("retreating to {}", self.system_name(system)),
                Some(pool) => format!(
                    "retreating to {} with a command token from the {}",
                    self.system_name(system),
                    pool.name()
                ),
            },
            Action::FreeSecondaries { players } => match players.names() {
                names if names.is_empty() => {
                    "letting no other player resolve the secondary ability for free".into()
                }
                names => format!(
                    "letting {names} resolve the secondary ability without spending a command token"
                ),
            },
        }
    }

    /// "moving a carrier with 2 fighters from 19".
    fn move_text(&self, from: u16, class: u8, fighters: u8) -> String {
        let carried = match fighters {
            0 => String::new(),
            k => format!(" with {}", count(u32::from(k), "fighter", "fighters")),
        };
        format!(
            "moving a {}{carried} from {}",
            self.class_name(class),
            self.system_name(from)
        )
    }

    /// "playing Signal Jamming on p1 in 19".
    fn card_play_text(&self, card: u8, player: Option<u16>, system: Option<u16>) -> String {
        let name = self
            .rules
            .hands
            .get(usize::from(card))
            .map_or_else(|| format!("action card #{card}"), |c| c.name.clone());
        let mut text = format!("playing {name}");
        if let Some(q) = player {
            text.push_str(&format!(" on p{q}"));
        }
        if let Some(s) = system {
            text.push_str(&format!(" in {}", self.system_name(s)));
        }
        text
    }

    /// "using Foresight to 19", "using Fabrication for a command token in the fleet pool".
    fn ability_use_text(&self, ability: u8, system: Option<u16>, pool: Option<Pool>) -> String {
        let name = self
            .rules
            .abilities
            .get(usize::from(ability))
            .map_or_else(|| format!("ability #{ability}"), |a| a.name.clone());
        match (system, pool) {
            (Some(s), _) => format!("using {name} to {}", self.system_name(s)),
            (None, Some(pool)) => {
                format!("using {name} for a command token in the {}", pool.name())
            }
            (None, None) => format!("using {name}"),
        }
    }
}
