//! Coffer ruleset `guide-board`: "outposts", a small token-placement game on a ring of sites, written
//! strictly the way docs/WRITING_A_RULESET.md and `template/` teach (one `validate` per action with the
//! kernel's read-only checks, the legal list of many candidates in the guide's two parts, a new game per
//! playout), next to the same game written by hand in plain Rust ([`plain`]), which
//! `benches/playout.rs` times side by side, setup included.
//!
//! ```
//! use coffer_core::{Adapter, Owner, Setup};
//! use coffer_guide_board::Outposts;
//!
//! let ruleset = Adapter::shared(Outposts);
//! let mut game = ruleset.new_game(&Setup::new(6, 1)).unwrap();
//! // Player 0 opens round 1: a place on each of the 30 sites, harvest, or pass.
//! assert_eq!(game.legal_actions(Owner(0)), 32);
//! game.apply_json(Owner(0), r#"{"type":"place","site":7}"#).unwrap();
//! assert!(game.check_invariants().is_ok());
//! // Player 1's turn now; site 7 is player 0's.
//! assert!(game.apply_json(Owner(1), r#"{"type":"place","site":7}"#).is_err());
//! ```
//!
//! # The game
//!
//! 2 to 6 players (6 in the bench), a ring board of `sites` sites (default 30, 1 to 200; site `i`'s
//! neighbours are `i - 1` and `i + 1`, round the ring) and `rounds` rounds (default 8, 1 to 100). Each
//! player has 12 tokens, all in reinforcements at the start, an energy pool of 3 and a harvest.
//!
//! Round `r` (from 0) starts with player `r % players`; players then act in turn round the table,
//! skipping those who passed. On their turn a player takes one action:
//!
//! - **place** a site: pay 1 energy and move a token from reinforcements onto a site that is empty or
//!   already theirs;
//! - **shift** from a site to a neighbouring site: pay 1 energy and move one of their tokens from a site
//!   they hold to a neighbouring site that is empty or theirs;
//! - **harvest**, once a round: score a point per site they hold (a site holds any number of its
//!   holder's tokens; the score stops at 20);
//! - **pass**: out for the rest of the round.
//!
//! With no energy left only harvest and pass remain. When everyone has passed the round ends: energy
//! empties and harvests ready; unless it was the last round, the next round starts with every energy
//! pool refilled to 3. Tokens stay on the board from round to round. After the last round the highest
//! score wins (ties share the win).
//!
//! # Legal-action order
//!
//! Only the player whose turn it is has legal actions, in this order: `place` by ascending site; then
//! `shift` by ascending `(from, to)`; then `harvest`; then `pass` (always). [`plain::Game::legal`]
//! lists the same moves in the same order, so a seeded random playout plays the identical game on both.
//!
//! # On the kernel
//!
//! | Rule | Kernel primitive |
//! |------|------------------|
//! | 12 tokens per player, in reinforcements | K4 token supply: one reinforcements zone per player, its reserve |
//! | Sites | one zone of the game's per site, of kind `site`, made with one `add_zones`; the board index lists a player's (K4.8) |
//! | Place, shift | K4.1 `move_tokens`, checked first with `can_move_tokens` (K8.2) |
//! | Energy, 1 per place or shift, emptied at the round's end | K1 amount capped at 3 that lasts an act (K2), checked with `can_spend` |
//! | Harvest once a round | K5 permanent per player, readied when the act ends, checked with `can_exhaust` |
//! | Score at most 20 | K1 amount capped at 20 (what the cap takes is reported) |
//! | Rounds | K10 clock: a round is an act (`Scope::Act`); turns, phases and steps are not used |
//!
//! # Files
//!
//! The shared ruleset layout (docs/WRITING_A_RULESET.md): `actions` (the enum and its codes),
//! `refusals` (why an action is refused, in words), `validate` (one check per action), `legal` (who acts,
//! the legal list), `apply` (validate, then the rule, then the turn), `rules/` (`sites`, `harvest`,
//! `round`), `state` (configuration, setup, the questions the rules ask, the outcome), `words`,
//! `describe`, `table`; `plain` as above.

pub mod actions;
pub mod apply;
pub mod describe;
pub mod legal;
#[doc(hidden)]
pub mod plain;
pub mod refusals;
pub mod rules;
pub mod state;
pub mod table;
pub mod validate;
pub mod words;

pub use actions::Action;
pub use state::{Config, MAX_PLAYERS, MAX_SCORE, State, TOKENS};

use coffer_core::{
    ActionError, Description, Key, Ledger, Outcome, Owner, Ruleset, SetupError, Table, Violation,
};

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Outposts;

impl Ruleset for Outposts {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        describe::description()
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        State::new(players, seed, config)
    }

    fn legal_actions(&self, s: &State, player: Owner, out: &mut Vec<Action>) {
        legal::legal_actions(s, player, out);
    }

    fn to_act(&self, s: &State, out: &mut Vec<Owner>) {
        legal::to_act(s, out);
    }

    fn apply(&self, s: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        apply::apply(s, player, action)
    }

    fn ledger<'s>(&self, s: &'s State) -> &'s Ledger {
        &s.ledger
    }

    fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger {
        &mut s.ledger
    }

    fn outcome(&self, s: &State) -> Outcome {
        s.outcome()
    }

    fn table(&self, s: &State, seat: Option<Owner>, table: &mut Table) {
        s.fill_table(seat, table);
    }

    fn label(&self, _s: &State, key: Key) -> Option<String> {
        (key.kind == state::SITE).then(|| format!("site {}", key.subject))
    }

    /// A player's natural move when their time runs out: pass.
    fn default_action(&self, s: &State, player: Owner) -> Option<Action> {
        (s.active() == Some(player)).then_some(Action::Pass)
    }

    /// No site holds the tokens of two players.
    fn check_invariants(&self, s: &State) -> Result<(), Violation> {
        for site in 0..s.site_count() {
            let counts = s.ledger.zone_tokens(s.sites[usize::from(site)]);
            if counts.iter().filter(|&&n| n > 0).count() > 1 {
                return Err(Violation(format!(
                    "site {site} holds the tokens of several players: {counts:?}"
                )));
            }
        }
        Ok(())
    }
}

// Registers the ruleset for hosts that link this crate, and exports it from the cdylib for
// `coffer --plugin-dir`. Once per crate.
coffer_core::plugin!(Outposts);
