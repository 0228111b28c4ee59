//! Coffer ruleset `command-tokens`: Twilight Imperium 4 command tokens, pools and reinforcements (clauses
//! T1-T29), on the kernel's token supplies (K4), limits awaiting a choice (K6), exhaustion (K5) and clock.
//!
//! ```
//! use coffer_command_tokens::CommandTokens;
//! use coffer_core::{Adapter, Names, Owner, Setup};
//!
//! let ruleset = Adapter::shared(CommandTokens::new());
//! let mut game = ruleset.new_game(&Setup::new(3, 1)).unwrap();
//! let table = game.table(None);
//! assert_eq!(table.acting[0].why, "to pick a strategy card");
//! // The speaker (p0) picks Leadership in the strategy phase.
//! game.apply_json(Owner(0), r#"{"type":"pick","card":0}"#).unwrap();
//! assert!(game.check_invariants().is_ok());
//! let vocabulary = &ruleset.description().vocabulary;
//! let names = Names::with_resources(vocabulary, &game.resources(None));
//! let said = names.event(&game.events()[0], None).unwrap();
//! assert_eq!(said, "p0 picks Leadership, by p0's strategy card pick");
//! ```

mod actions;
mod apply;
mod config;
pub mod content;
mod flow;
mod galaxy;
mod ids;
mod invariants;
mod legal;
mod phase;
mod refusals;
mod resolve;
mod rules;
mod setup;
mod state;
mod table;
mod words;

pub use actions::{Action, Players};
pub use config::{
    Ability, AgendaOp, AgendaRule, COMMAND_TOKENS, Config, Forge, HandCard, MAX_INFLUENCE,
    MAX_PLAYERS, MAX_PRODUCTION, MAX_ROUNDS, MAX_SYSTEMS, MIN_PLAYERS, NOBODY, Rules, ShipsConfig,
    SystemConfig, SystemInfo, Vote,
};
pub use content::{
    AbilityKind, AbilitySpec, ActionCard, Agenda, AgendaEffect, Card, CardEffect, Content,
    ContentError, ContentOverride, Effect, EffectSpec, Faction, Law, Placed, ShipClass, StarForge,
    StrategyCard, Technology, Window,
};
pub use galaxy::default_galaxy;
pub use ids::{Pool, effect, face, kind, note};
pub use phase::{Flow, Phase, Step};
pub use setup::{Prepared, StartShips};
pub use state::{Handles, State, ship_supply};
pub use words::vocabulary;

use coffer_core::{
    ActionError, Description, Doc, Key, Ledger, Outcome, Owner, Ruleset, SetupError, Table,
    Violation,
};
use serde_json::json;
use std::sync::OnceLock;

/// The ruleset. Keeps the default configuration's setup per player count, resolved on first use (and with
/// it, those games' shared rules alive).
pub struct CommandTokens {
    defaults: [OnceLock<Result<Prepared, SetupError>>; MAX_PLAYERS + 1],
}

impl CommandTokens {
    /// The ruleset with the embedded content (`data/*.json`).
    pub fn new() -> CommandTokens {
        CommandTokens {
            defaults: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

impl Default for CommandTokens {
    fn default() -> CommandTokens {
        CommandTokens::new()
    }
}

fn action_docs() -> Vec<Doc> {
    vec![
        Doc::with(
            "pick",
            "Strategy phase: take a strategy card nobody holds (index into the card list).",
            json!({"type":"pick","card":0}),
        ),
        Doc::with(
            "tactical",
            "T4: spend a tactic token and place it in a system (index into the galaxy) that holds none of your tokens; others' tokens do not block. Movement follows (T14), then a space combat if another player's ships are there (T15), then production.",
            json!({"type":"tactical","system":3}),
        ),
        Doc::with(
            "produce",
            "Production of the tactical action: one ship of a class (index into the ship list) from your ship reinforcements into the activated system, at most `production` per action.",
            json!({"type":"produce","class":2}),
        ),
        Doc::with(
            "done",
            "Ends production and the tactical action (each produced ship was already checked against the fleet limit, T7).",
            json!({"type":"done"}),
        ),
        Doc::with(
            "strategic",
            "Resolve the primary of a strategy card you hold and have not used; then each other player may resolve its secondary.",
            json!({"type":"strategic","card":0}),
        ),
        Doc::with(
            "pass",
            "Pass for the rest of the action phase, once every card you hold is used.",
            json!({"type":"pass"}),
        ),
        Doc::with(
            "gain",
            "T2: put one gained command token in the pool of your choice (tactic, fleet, strategy).",
            json!({"type":"gain","pool":"fleet"}),
        ),
        Doc::with(
            "buy",
            "T9 (Leadership): spend influence for one token per 3; the excess is wasted; no more tokens than reinforcements hold.",
            json!({"type":"buy","influence":7}),
        ),
        Doc::with(
            "secondary",
            "T5: resolve the secondary of the card just played, spending its cost in strategy tokens (to reinforcements); Leadership's costs none.",
            json!({"type":"secondary"}),
        ),
        Doc::with(
            "decline",
            "Decline the secondary.",
            json!({"type":"decline"}),
        ),
        Doc::with(
            "diplomacy",
            "Diplomacy primary: choose a system other than Mecatol Rex; each other player places a token there from reinforcements (T3, T6).",
            json!({"type":"diplomacy","system":2}),
        ),
        Doc::with(
            "fallback",
            "T3: your reinforcements are empty and a token must be placed from them: choose the pool it comes from.",
            json!({"type":"fallback","pool":"strategy"}),
        ),
        Doc::with(
            "remove_token",
            "Warfare primary: remove one of your command tokens from the board to reinforcements.",
            json!({"type":"remove_token","system":3}),
        ),
        Doc::with(
            "place",
            "Construction secondary: place a token from reinforcements in a system (T6: where you have one, it goes back to reinforcements and the structure is still placed); `fallback` names the pool when reinforcements are empty (T3).",
            json!({"type":"place","system":4}),
        ),
        Doc::with(
            "redistribute",
            "Status phase and Warfare: the new tactic/fleet/strategy counts, summing to the tokens on your command sheet.",
            json!({"type":"redistribute","tactic":4,"fleet":4,"strategy":2}),
        ),
        Doc::with(
            "remove_ship",
            "T7/K6: remove one non-fighter ship over the fleet limit to reinforcements; the only legal action while a limit is exceeded.",
            json!({"type":"remove_ship","system":1,"class":3}),
        ),
        Doc::with(
            "free_secondaries",
            "Trade's primary (T11): the other players (any number, none included) who then resolve Trade's secondary without spending a command token, and must.",
            json!({"type":"free_secondaries","players":[1,3]}),
        ),
        Doc::with(
            "move",
            "T14: one of your ships of a class with a move value moves from a system without your command token into the activated system, along adjacent systems no more than its move value, never through a system holding another player's ships; it transports up to its capacity of fighters from that system (`fighters`, default 0). The fleet pool limits the ships there at once (T7).",
            json!({"type":"move","from":4,"class":3,"fighters":2}),
        ),
        Doc::with(
            "end_movement",
            "T14: ends movement: a space combat follows if another player has ships in the activated system (T15), else production. With no combat due, `produce` and `done` also end movement.",
            json!({"type":"end_movement"}),
        ),
        Doc::with(
            "announce_retreat",
            "T15: in a space combat round, announce a retreat (the defender first; the attacker not after the defender announced one); only with a system to retreat to.",
            json!({"type":"announce_retreat"}),
        ),
        Doc::with(
            "no_retreat",
            "T15: in a space combat round, announce no retreat.",
            json!({"type":"no_retreat"}),
        ),
        Doc::with(
            "roll",
            "T15: the hits your combat roll produced, rolled at the table, at most one per ship of yours in the combat; the attacker rolls first.",
            json!({"type":"roll","hits":1}),
        ),
        Doc::with(
            "destroy",
            "T15: destroy one of your ships in the combat for a hit against you (it returns to reinforcements); the attacker assigns first.",
            json!({"type":"destroy","class":1}),
        ),
        Doc::with(
            "retreat",
            "T16: after the hits, the player who announced a retreat moves every ship with a move value (and the fighters they transport; the rest are removed) to an adjacent system holding their ships and no other player's, and places a command token there from reinforcements unless one is there; `fallback` names the pool when reinforcements are empty (T3).",
            json!({"type":"retreat","system":3}),
        ),
        Doc::with(
            "eliminate",
            "T18 (LRR 33): after the invasion step of your tactical action (during production, or with no space combat due, in movement), record that the table found a player still in the game (another, or you) meeting LRR 33.1: no ground forces on the board, no unit with Production, no planet. Their command tokens and units return to the game box (tokens of theirs in another player's fleet pool stay), their strategy cards return to the common play area and the speaker token passes left. Not the last player; only with option `elimination`. Eliminating yourself ends your turn.",
            json!({"type":"eliminate","player":2}),
        ),
        Doc::with(
            "star_forge",
            "T19, the Embers of Muaat's Star Forge, a component action that takes your turn: spend 1 token from your strategy pool to place 2 fighters or 1 destroyer (`class`) from your reinforcements (as many as are left) in a system holding one of your war suns. Placed ships are held to the fleet limit (T7).",
            json!({"type":"star_forge","system":4,"class":1}),
        ),
        Doc::with(
            "component_action",
            "T21: a component action that spends strategy tokens and takes your turn, by index into the game's list (the table's Abilities section): the Federation of Sol's Orbital Drop, Production Biomes (exhausts until the round's end); what it does besides (infantry, trade goods) is not modelled.",
            json!({"type":"component_action","ability":0}),
        ),
        Doc::with(
            "play_card",
            "T22: play an action card of your hand (option `action_cards`), by its slot in the game's list of dealt cards (the table's Action cards section), in its window: as your turn's action (Insubordination with `player`, Unexpected Action with `system`, Signal Jamming with `system` and `player`), at the start of the strategy phase (Summit), at the start of a combat round (Skilled Retreat with `system`, and `fallback` when reinforcements are empty), or after an agenda is revealed (a rider, with its prediction: `vote` or `elect`).",
            json!({"type":"play_card","card":2,"player":1}),
        ),
        Doc::with(
            "no_card",
            "T22: play no (more) action card in this window.",
            json!({"type":"no_card"}),
        ),
        Doc::with(
            "use_ability",
            "T23: use an ability that reacts to another player, by index into the game's list (the table's Abilities section): Nullification Field (the Xxcha Kingdom's technology) after a system holding your ships is activated, which ends that player's turn; Foresight (the Naalu Collective), with the adjacent `system`, after ships move into a system holding yours.",
            json!({"type":"use_ability","ability":1,"system":4}),
        ),
        Doc::with(
            "no_reaction",
            "T23: do not use the ability the game waits on (Nullification Field, Foresight, or Predictive Intelligence at the end of your turn; with Predictive Intelligence, `redistribute` uses it).",
            json!({"type":"no_reaction"}),
        ),
        Doc::with(
            "elect_card",
            "T24: the strategy card an Elect Strategy Card agenda elects (Galactic Crisis Pact): each player, from the speaker, may then resolve its secondary ability without spending a command token.",
            json!({"type":"elect_card","card":3}),
        ),
        Doc::with(
            "additional_action",
            "T24, Minister of War: at the end of your turn (not after passing), discard it to return your command token in `system` to reinforcements, then take one more action.",
            json!({"type":"additional_action","system":3}),
        ),
        Doc::with(
            "swap_cards",
            "T27, the Emirates of Hacan's Quantum Datahub Node: at the end of the strategy phase, spend 1 strategy token (and, at the table, give 3 trade goods) to give one of your strategy cards (`give`) to the holder of `take` and take `take`.",
            json!({"type":"swap_cards","give":1,"take":4}),
        ),
        Doc::with(
            "prerequisites",
            "T29, Research Grant Reallocation: the speaker enters how many prerequisites (0 to 4) the technology the elected player gains has; that player returns that many fleet-pool tokens (as many as there are). Gaining the technology is not modelled.",
            json!({"type":"prerequisites","count":2}),
        ),
        Doc::with(
            "recombine",
            "T27, the Mahact Gene-Sorcerers' Genetic Recombination: before votes are cast, exhaust it to name a player, who then votes as you choose (`no_reaction`, at the table) or returns a token from their fleet pool (`return_token` with `fleet`).",
            json!({"type":"recombine","player":2}),
        ),
        Doc::with(
            "reveal_agenda",
            "T20, agenda phase: the speaker enters the agenda revealed from the deck, by index into data/agendas.json (each once per game), or, with no `agenda`, one that does nothing to command tokens.",
            json!({"type":"reveal_agenda","agenda":0}),
        ),
        Doc::with(
            "quash",
            "T20, the Xxcha Kingdom's Quash: when an agenda is revealed, spend 1 token from your strategy pool to discard it; the speaker reveals another.",
            json!({"type":"quash"}),
        ),
        Doc::with(
            "no_quash",
            "T20: let the revealed agenda stand.",
            json!({"type":"no_quash"}),
        ),
        Doc::with(
            "outcome",
            "T20: the speaker enters the outcome the table voted for a For/Against agenda: `for` or `against`; for an Against that concerns those who voted it (Wormhole Research, T24), `voted_against` lists them.",
            json!({"type":"outcome","vote":"against"}),
        ),
        Doc::with(
            "elect",
            "T20: the speaker enters the player an Elect Player agenda elects (a player still in the game).",
            json!({"type":"elect","player":2}),
        ),
        Doc::with(
            "return_token",
            "T20: return a command token from a pool of your command sheet to reinforcements, as an agenda requires (Clandestine Operations' For: 2 tokens of your choice).",
            json!({"type":"return_token","pool":"tactic"}),
        ),
        Doc::with(
            "release",
            "T17, Edict: after a token of another player's entered your fleet pool over a law's maximum, return one token from it to its owner's reinforcements: one of yours (`player` is you) or another player's.",
            json!({"type":"release","player":2}),
        ),
    ]
}

fn option_docs() -> Vec<Doc> {
    let d = Config::default();
    vec![
        Doc::with(
            "rounds",
            "Rounds played, 1 to 1000; the game then ends and each player scores the tokens on their command sheet.",
            json!(d.rounds),
        ),
        Doc::with(
            "factions",
            "Faction id per player: one per player, each known and taken once; empty: the first factions of data/factions.json in order (letnev, sol, hacan, jolnar, xxcha, mentak, arborec, saar).",
            json!(d.factions),
        ),
        Doc::with(
            "laws",
            "Laws in play from the start, e.g. [\"fleet-regulations\"]; a law may not cap the fleet pool below 3.",
            json!(d.laws),
        ),
        Doc::with(
            "technologies",
            "Technologies each player owns from the start, one list per player, e.g. [[\"hyper-metabolism\"], [], []]; each known and owned once; empty: none.",
            json!(d.technologies),
        ),
        Doc::with(
            "galaxy",
            "Systems: [{\"id\":\"18\",\"no_diplomacy\":true,\"adjacent\":[\"19\"],\"ships\":[{\"player\":0,\"class\":\"carrier\",\"count\":2}]}]; `adjacent` names the systems next to it (mutual, so one side is enough; not itself). Empty: Mecatol Rex (18), one home system per player with the faction's starting fleet, then one empty system per player (19, 20, ...), in a ring around Mecatol Rex where each empty system touches Mecatol Rex and the home systems before and after it. At most 200 systems, ids unique and not empty; no more ships of a class than the player's pieces; one player's ships per system.",
            json!(d.galaxy),
        ),
        Doc::with(
            "influence",
            "Influence each player has each round for Leadership, 0 to 1000000; unspent influence is lost at the round's end.",
            json!(d.influence),
        ),
        Doc::with(
            "influence_per_player",
            "Influence per player (one value per player, each 0 to 1000000), overriding `influence` when not empty.",
            json!(d.influence_per_player),
        ),
        Doc::with(
            "production",
            "Most ships one tactical action produces, 0 to 20.",
            json!(d.production),
        ),
        Doc::with(
            "cards_per_player",
            "Strategy cards each player picks; 0: 2 with 3-4 players, 1 with 5-8; otherwise at most the number of strategy cards divided by the players.",
            json!(d.cards_per_player),
        ),
        Doc::with(
            "content",
            "Inline content replacing embedded lists: {\"ships\":[...],\"strategy_cards\":[...],\"factions\":[...],\"laws\":[...],\"technologies\":[...],\"agendas\":[...]}.",
            json!(d.content),
        ),
        Doc::with(
            "elimination",
            "Whether the table may declare a player eliminated with `eliminate` (T18, LRR 33). Off by default: LRR 33.1's three conditions concern ground forces, units with Production and planets, which this ruleset does not model, so only a table that tracks them can decide; with it on, random playouts also eliminate players far more often than play does.",
            json!(d.elimination),
        ),
        Doc::with(
            "agenda_phase_from",
            "The round from which every round ends with an agenda phase (T20, LRR 8), 0 to 1000; 0: never. The agenda phase begins once the custodians token leaves Mecatol Rex, which the table decides; in it the speaker reveals two agendas in turn, the Xxcha may Quash each, and the speaker enters the outcome the table voted.",
            json!(d.agenda_phase_from),
        ),
        Doc::with(
            "action_cards",
            "The action cards each player holds, by id from data/action_cards.json, one list per player (e.g. [[\"summit\"], [\"skilled-retreat\"], []]); each is played once; no more of a card than the deck's copies; at most 32 dealt and 4 riders. Drawing is not modelled: hands are dealt by configuration and known to all. Empty: none.",
            json!(d.action_cards),
        ),
        Doc::with(
            "wormholes",
            "The systems holding an alpha or beta wormhole, by system id (T29): Wormhole Reconstruction's Against places tokens there, and its For makes them adjacent to each other. Empty: none (the default galaxy has none).",
            json!(d.wormholes),
        ),
        Doc::with(
            "relic_fragments",
            "The relic fragments each player holds at the start, one count per player, 0 to 16 (T28; e.g. [2, 0, 0]): the Naaz-Rokha Alliance's Fabrication purges one for a command token. Exploration is not modelled: fragments come only from here. Empty: none.",
            json!(d.relic_fragments),
        ),
        Doc::with(
            "homes",
            "Each player's home system by system id, one per player (Shared Research's Against places a token there); empty: the system `home-<faction>` if the galaxy has one, as the default galaxy does.",
            json!(d.homes),
        ),
    ]
}

impl Ruleset for CommandTokens {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        let mut d = Description::new(
            "command-tokens",
            env!("CARGO_PKG_VERSION"),
            "Twilight Imperium 4 command tokens: tactic, fleet and strategy pools, reinforcements, the fleet limit",
        );
        d.min_players = MIN_PLAYERS as u16;
        d.max_players = MAX_PLAYERS as u16;
        d.phases = vec![
            "strategy".into(),
            "action".into(),
            "status".into(),
            "agenda".into(),
        ];
        d.resources = vec![
            Doc::new(
                "reinforcements",
                "Each player's command tokens off the sheet and off the board (16 tokens in all per player, T1).",
            ),
            Doc::new(
                "tactic pool",
                "Tokens spent for tactical actions (faction side up).",
            ),
            Doc::new(
                "fleet pool",
                "Tokens that cap non-fighter ships per system (ship side up); never spent for actions.",
            ),
            Doc::new(
                "strategy pool",
                "Tokens spent for secondaries (faction side up).",
            ),
            Doc::new(
                "system",
                "One zone per system: at most one command token per player (T6).",
            ),
            Doc::new(
                "ships",
                "Ship pieces per player: in reinforcements per class, and per system and class.",
            ),
            Doc::new(
                "influence",
                "Per player per round, spent on Leadership; resets at the round's end.",
            ),
            Doc::new(
                "structures",
                "Structures placed by Construction, per player.",
            ),
            Doc::new(
                "strategy card",
                "Exhausted once its strategic action is done; readied at the round's end.",
            ),
        ];
        d.actions = action_docs();
        d.vocabulary = vocabulary();
        d.options = option_docs();
        d
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        let cached = self
            .defaults
            .get(usize::from(players))
            .filter(|_| *config == Config::default());
        match cached {
            Some(cell) => State::from_prepared(
                cell.get_or_init(|| Prepared::new(players, config))
                    .as_ref()
                    .map_err(Clone::clone)?,
                seed,
            ),
            None => State::from_prepared(&Prepared::new(players, config)?, seed),
        }
    }

    #[inline]
    fn legal_actions(&self, state: &State, player: Owner, out: &mut Vec<Action>) {
        state.legal_actions(player, out);
    }

    /// Only the player whose decision the game waits for ([`State::actor`]) ever has legal actions.
    fn to_act(&self, state: &State, out: &mut Vec<Owner>) {
        out.extend(state.actor());
    }

    #[inline]
    fn apply(&self, state: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        state.apply(player, action)
    }

    fn ledger<'s>(&self, state: &'s State) -> &'s Ledger {
        &state.ledger
    }

    fn ledger_mut<'s>(&self, state: &'s mut State) -> &'s mut Ledger {
        &mut state.ledger
    }

    fn outcome(&self, state: &State) -> Outcome {
        if state.flow.phase != Phase::Over || !state.ledger.pending().is_empty() {
            return Outcome::Ongoing;
        }
        // An eliminated player (T18) ranks below every player still in the game.
        let score = |p| match state.is_eliminated(p) {
            true => -1,
            false => i64::from(state.sheet(p)),
        };
        Outcome::by_score(state.owners().map(score).collect())
    }

    /// The same table for every seat and spectators: nothing in this ruleset is hidden.
    fn table(&self, state: &State, _: Option<Owner>, table: &mut Table) {
        state.fill_table(table);
    }

    fn label(&self, state: &State, key: Key) -> Option<String> {
        let r = &state.rules;
        let s = key.subject as usize;
        Some(match key.kind {
            kind::REINFORCEMENTS => "reinforcements".into(),
            kind::TACTIC => "tactic pool".into(),
            kind::FLEET => "fleet pool".into(),
            kind::STRATEGY => "strategy pool".into(),
            kind::SYSTEM => r.system_labels.get(s)?.clone(),
            kind::SHIP_RESERVE => format!("{} reinforcements", r.classes.get(s)?.name),
            kind::SHIPS => {
                let classes = r.class_count().max(1);
                format!(
                    "{} in {}",
                    r.classes.get(s % classes)?.name,
                    r.system_labels.get(s / classes)?
                )
            }
            kind::INFLUENCE => "influence".into(),
            kind::STRUCTURES => "structures".into(),
            kind::CARD => r.cards.get(s)?.name.clone(),
            kind::FLEET_LIMIT => format!("fleet in {}", r.system_labels.get(s)?),
            kind::CAPTURED => format!("fleet pool of {}", r.faction_names.get(s)?),
            kind::AGENDA => r.agendas.get(s)?.name.clone(),
            kind::ABILITY => r.abilities.get(s)?.name.clone(),
            kind::ACTION_CARD => r.hands.get(s)?.name.clone(),
            kind::FRAGMENTS => "relic fragments".into(),
            kind::BOX => match s {
                0 => "command tokens in the game box".into(),
                s => format!("{} in the game box", r.classes.get(s - 1)?.name),
            },
            _ => return None,
        })
    }

    fn check_invariants(&self, state: &State) -> Result<(), Violation> {
        state.check_rules()
    }
}

coffer_core::plugin!(CommandTokens::new());
