//! Test helpers: games with chosen decks, a transaction harness like the host's adapter, card placement.

use coffer_core::ActionError;
use coffer_core::{Owner, Ruleset};
use coffer_story_acts::{Action, Band, Config, State, StoryActs, Zone};

pub use coffer_story_acts::Action as A;

/// A game of `players` with unshuffled decks: `deck` first (drawn first), then one copy of every other
/// starter card; nobody holds cards before the first Draw Phase.
pub fn game_with(players: u16, deck: &[&str], tweak: impl FnOnce(&mut Config)) -> State {
    let mut cfg = Config {
        shuffle_decks: false,
        starting_hand: 0,
        ..Config::default()
    };
    let names: Vec<String> = cfg.factors.iter().map(|f| f.name.clone()).collect();
    let db = coffer_story_acts::CardDb::starter(&names).expect("starter set");
    let mut ids: Vec<String> = deck.iter().map(|s| s.to_string()).collect();
    for c in db.cards() {
        if c.card_type != coffer_story_acts::CardType::Homeworld {
            ids.push(c.id.clone());
        }
    }
    cfg.deck = Some(ids);
    tweak(&mut cfg);
    StoryActs::new().new_game(players, 1, &cfg).expect("setup")
}

/// A two-player game whose decks are `deck`, nothing in hand, default options otherwise.
pub fn game(deck: &[&str]) -> State {
    game_with(2, deck, |_| {})
}

/// Deploying (or playing) `card` from hand with no target and no CP split.
pub fn deploy(card: u16) -> Action {
    Action::Deploy {
        card,
        target: None,
        cp: Default::default(),
    }
}

/// Pushing Galactic Factor `factor` `steps` steps up (`up`) or down.
pub fn push(factor: u8, up: bool, steps: u8) -> Action {
    Action::PushFactor { factor, up, steps }
}

/// Applies an action as the host does: one kernel transaction, rolled back on refusal.
pub fn apply(s: &mut State, p: u16, a: Action) -> Result<(), ActionError> {
    let r = StoryActs::new();
    let mark = s.ledger.begin();
    match r.apply(s, Owner(p), &a) {
        Ok(()) => {
            s.ledger.commit(mark);
            Ok(())
        }
        Err(e) => {
            s.ledger.rollback(mark);
            Err(e)
        }
    }
}

/// Applies an action that must succeed.
#[track_caller]
pub fn ok(s: &mut State, p: u16, a: Action) {
    if let Err(e) = apply(s, p, a) {
        panic!("{a:?} by p{p} refused: {e}");
    }
}

/// Applies an action that must be refused: the state hash unchanged, no event, not listed as legal (the
/// SDK's harness).
#[track_caller]
pub fn refused(s: &mut State, p: u16, a: Action) -> ActionError {
    coffer_core::testing::refused(&StoryActs::new(), s, Owner(p), &a)
}

/// The legal actions of `p`.
pub fn legal(s: &State, p: u16) -> Vec<Action> {
    let mut out = Vec::new();
    StoryActs::new().legal_actions(s, Owner(p), &mut out);
    out
}

/// A card instance of `id` owned by `p` that is still in the deck or hand.
#[track_caller]
pub fn find(s: &State, p: u16, id: &str) -> u16 {
    let def = s.rules.db.find(id).expect("card id");
    s.cards
        .iter()
        .position(|c| c.def == def && c.owner == p && matches!(c.zone, Zone::Deck | Zone::Hand))
        .unwrap_or_else(|| panic!("no {id} of p{p} left in deck or hand")) as u16
}

/// Moves a card of `p` from the deck into the hand.
pub fn to_hand(s: &mut State, p: u16, id: &str) -> u16 {
    let c = find(s, p, id);
    if s.cards[usize::from(c)].zone == Zone::Deck {
        s.decks[usize::from(p)].retain(|&x| x != c);
        s.cards[usize::from(c)].zone = Zone::Hand;
        s.hands[usize::from(p)].push(c);
    }
    c
}

/// Puts a card of `p` into play in its deploy Band (test setup, no cost paid).
pub fn to_play(s: &mut State, p: u16, id: &str) -> u16 {
    let c = find(s, p, id);
    let band = s.deploy_band(s.def(c), Owner(p));
    s.put_in_play(c, band);
    c
}

/// Puts a unit of `p` into play in `band`.
pub fn to_band(s: &mut State, p: u16, id: &str, band: Band) -> u16 {
    let c = to_play(s, p, id);
    s.cards[usize::from(c)].band = Some(band);
    c
}

/// Sets a player's Treasury (test setup).
pub fn set_treasury(s: &mut State, p: u16, v: i64) {
    let id = s.seats[usize::from(p)].treasury;
    s.ledger
        .set(id, v, coffer_core::Cause::Setup)
        .expect("set treasury");
    s.ledger.take_events();
}

/// Ends `p`'s turn and the next player's, so that `p` is active again (2 players, no hand limit issue).
pub fn round(s: &mut State) {
    let p = s.active;
    ok(s, p, A::EndTurn {});
    let q = s.active;
    ok(s, q, A::EndTurn {});
}

/// `seat`'s table of the game in `s` (`None`: a spectator's), through the host-facing adapter, which names
/// the phase and adds the pending choices.
pub fn table(s: &State, seat: Option<u16>) -> coffer_core::Table {
    let bytes = serde_json::to_vec(s).expect("state");
    coffer_core::Adapter::shared(StoryActs::new())
        .restore(coffer_core::Format::Json, &bytes)
        .expect("the state restores")
        .table(seat.map(Owner))
}

/// The rows of a table's section, as `(owner, label, value)`.
#[track_caller]
pub fn rows(t: &coffer_core::Table, title: &str) -> Vec<(Owner, String, String)> {
    t.sections
        .iter()
        .find(|s| s.title == title)
        .unwrap_or_else(|| panic!("no section {title}"))
        .rows
        .iter()
        .map(|r| (r.owner, r.label.to_string(), r.value.to_string()))
        .collect()
}

/// Who may act in a table, in order.
pub fn acting(t: &coffer_core::Table) -> Vec<(u16, &str)> {
    t.acting
        .iter()
        .map(|m| (m.seat.0, m.why.as_str()))
        .collect()
}
