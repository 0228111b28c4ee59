//! Helpers: games from a configuration, actions applied in one kernel transaction (as the host does), and
//! scenario set-up.

use coffer_command_tokens::{
    Action, CommandTokens, Config, Pool, ShipsConfig, State, Step, SystemConfig,
};
use coffer_core::{ActionError, Cause, Owner, Ruleset, testing};

// Card indices of data/strategy_cards.json.
/// Leadership's index.
pub const LEADERSHIP: u8 = 0;
/// Diplomacy's index.
pub const DIPLOMACY: u8 = 1;
/// Politics' index.
pub const POLITICS: u8 = 2;
/// Construction's index.
pub const CONSTRUCTION: u8 = 3;
/// Trade's index.
pub const TRADE: u8 = 4;
/// Warfare's index.
pub const WARFARE: u8 = 5;
/// Technology's index.
pub const TECHNOLOGY: u8 = 6;
/// Imperial's index.
pub const IMPERIAL: u8 = 7;
/// The six cards from Leadership, as picked in turn by the players of a three-player game.
#[rustfmt::skip]
pub const LEADERSHIP_TO_WARFARE: [u8; 6] = [LEADERSHIP, DIPLOMACY, POLITICS, CONSTRUCTION, TRADE, WARFARE];
/// The six cards from Diplomacy, as picked in turn by the players of a three-player game.
#[rustfmt::skip]
pub const DIPLOMACY_TO_TECHNOLOGY: [u8; 6] = [DIPLOMACY, POLITICS, CONSTRUCTION, TRADE, WARFARE, TECHNOLOGY];

/// Picks that leave p2 (Hacan in the default galaxy) acting first: p2 takes Leadership (initiative 1).
#[rustfmt::skip]
pub const HACAN_FIRST: [u8; 6] = [POLITICS, CONSTRUCTION, LEADERSHIP, TRADE, WARFARE, TECHNOLOGY];
/// Picks that leave Leadership last, with p2, and Politics with p0.
#[rustfmt::skip]
pub const LEADERSHIP_LAST: [u8; 6] = [POLITICS, CONSTRUCTION, TRADE, WARFARE, TECHNOLOGY, LEADERSHIP];

// Default 3-player galaxy: 18 (Mecatol Rex), home-letnev, home-sol, home-hacan, 19, 20, 21.
/// Hacan's home system.
pub const HOME_HACAN: u16 = 3;
/// The first empty system (19).
pub const EMPTY: u16 = 4;
// Ship classes of data/ships.json.
/// The fighter class.
pub const FIGHTER: u8 = 0;
/// The destroyer class.
pub const DESTROYER: u8 = 1;
/// The cruiser class.
pub const CRUISER: u8 = 2;
/// The carrier class.
pub const CARRIER: u8 = 3;
/// The dreadnought class.
pub const DREADNOUGHT: u8 = 4;
/// The war sun class.
pub const WAR_SUN: u8 = 5;

/// Player `p` by index: the helpers take indices for readability, the State API takes [`Owner`].
pub fn owner(p: u8) -> Owner {
    Owner(u16::from(p))
}

/// The index of player `p`, as the helpers take it.
pub fn index(p: Owner) -> u8 {
    u8::try_from(p.0).expect("a player")
}

/// A new game through the ruleset, events taken.
pub fn game(players: u16, config: Config) -> State {
    let mut s = CommandTokens::new()
        .new_game(players, 7, &config)
        .expect("game starts");
    s.ledger.take_events();
    s
}

/// A new game with the default configuration.
pub fn default_game(players: u16) -> State {
    game(players, Config::default())
}

/// Applies an action that must succeed.
#[track_caller]
pub fn ok(s: &mut State, p: u8, a: Action) {
    testing::applies(&CommandTokens::new(), s, owner(p), &a);
}

/// Applies an action that must be refused: the state hash unchanged, no event, not listed as legal (the
/// SDK's harness); returns the error.
#[track_caller]
pub fn refused(s: &mut State, p: u8, a: Action) -> ActionError {
    testing::refused(&CommandTokens::new(), s, owner(p), &a)
}

/// Asserts that the refusal `e` says `text`.
#[track_caller]
pub fn assert_says(e: &impl std::fmt::Display, text: &str) {
    assert!(e.to_string().contains(text), "{e}");
}

/// Owned strings from string literals, for the id lists of a configuration.
pub fn strings(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|&id| id.to_string()).collect()
}

/// `p`'s status-phase step: gained tokens into the tactic pool, then the command sheet redistributed to
/// `fleet` fleet tokens, none in the strategy pool and the rest in the tactic pool.
pub fn status_turn_to_fleet(s: &mut State, p: u8, fleet: u8) {
    while s.flow.step == Step::Gain {
        ok(s, p, Action::Gain { pool: Pool::Tactic });
    }
    let total = s.sheet(owner(p)) as u8;
    ok(
        s,
        p,
        Action::Redistribute {
            tactic: total - fleet,
            fleet,
            strategy: 0,
        },
    );
}

/// `p`'s legal actions.
pub fn legal(s: &State, p: u8) -> Vec<Action> {
    let mut out = Vec::new();
    s.legal_actions(owner(p), &mut out);
    out
}

/// Whose decision it is, by index.
#[track_caller]
pub fn actor(s: &State) -> u8 {
    index(s.actor().expect("someone must act"))
}

/// Plays the strategy phase: the k-th pick takes `cards[k]`.
#[track_caller]
pub fn pick(s: &mut State, cards: &[u8]) {
    for &card in cards {
        let p = actor(s);
        ok(s, p, Action::Pick { card });
    }
    assert_eq!(s.flow.step, Step::Turn, "the strategy phase should be over");
}

/// Test set-up: moves `n` of `p`'s command tokens from reinforcements to a pool (or back with a negative n).
pub fn shift_reserve(s: &mut State, p: u8, pool: Pool, n: i32) {
    let o = owner(p);
    let (from, to) = if n >= 0 {
        (s.h.reinforcements, s.h.pools[pool.index()])
    } else {
        (s.h.pools[pool.index()], s.h.reinforcements)
    };
    s.ledger
        .move_tokens(o, from, to, n.unsigned_abs(), Cause::Setup)
        .expect("set-up move");
    s.ledger.take_events();
}

/// `[tactic, fleet, strategy, reinforcements]` of `p`.
pub fn sheet(s: &State, p: u8) -> [u32; 4] {
    let p = owner(p);
    [
        s.pool(p, Pool::Tactic),
        s.pool(p, Pool::Fleet),
        s.pool(p, Pool::Strategy),
        s.reinforcements(p),
    ]
}

/// `p`'s status-phase step: each gained token into `pool`, then the command sheet redistributed as it is.
pub fn status_turn(s: &mut State, p: u8, pool: Pool) {
    while s.flow.step == Step::Gain {
        ok(s, p, Action::Gain { pool });
    }
    let [t, f, st, _] = sheet(s, p);
    ok(
        s,
        p,
        Action::Redistribute {
            tactic: t as u8,
            fleet: f as u8,
            strategy: st as u8,
        },
    );
}

/// Declines every pending secondary until `p` must decide or something else is awaited; a Trade primary
/// (T11) first chooses nobody to resolve it for free.
pub fn decline_secondaries_until(s: &mut State, p: Option<u8>) {
    if s.flow.step == Step::FreeSecondaries {
        let q = actor(s);
        ok(
            s,
            q,
            Action::FreeSecondaries {
                players: coffer_command_tokens::Players(0),
            },
        );
    }
    while s.flow.step == Step::Secondary && Some(actor(s)) != p {
        let q = actor(s);
        ok(s, q, Action::Decline);
    }
}

/// Index of a ship class by id.
pub fn class(s: &State, id: &str) -> u8 {
    s.rules
        .classes
        .iter()
        .position(|c| c.id == id)
        .expect("class") as u8
}

/// Index of a system by id.
pub fn system(s: &State, id: &str) -> u16 {
    s.rules
        .systems
        .iter()
        .position(|c| c.id == id)
        .expect("system") as u16
}

/// Plays the rest of the action phase simply: strategic actions with every secondary declined, then passes;
/// production ends at once.
pub fn finish_action_phase(s: &mut State) {
    use coffer_command_tokens::Phase;
    let mut guard = 0;
    while s.flow.phase == Phase::Action {
        guard += 1;
        assert!(guard < 1000, "the action phase does not end");
        let p = actor(s);
        let a = simple_action(s, p);
        ok(s, p, a);
    }
}

/// The simple choice of [`finish_action_phase`] for `p`: pass, decline or end production if possible, else a
/// strategic action, else the first legal action.
pub fn simple_action(s: &State, p: u8) -> Action {
    let l = legal(s, p);
    [Action::Pass, Action::Decline, Action::Done]
        .into_iter()
        .find(|a| l.contains(a))
        .or_else(|| {
            l.iter()
                .copied()
                .find(|a| matches!(a, Action::Strategic { .. }))
        })
        .unwrap_or(l[0])
}

/// Plays simple actions ([`simple_action`]) until `p` starts a turn.
#[track_caller]
pub fn until_turn_of(s: &mut State, p: u8) {
    while !(s.flow.step == Step::Turn && actor(s) == p) {
        let q = actor(s);
        let a = simple_action(s, q);
        ok(s, q, a);
    }
}

/// `p` activates `system`, moves these ships into it as (from, class, fighters), and ends movement (T14).
#[track_caller]
pub fn advance(s: &mut State, p: u8, system: u16, ships: &[(u16, u8, u8)]) {
    ok(s, p, Action::Tactical { system });
    for &(from, class, fighters) in ships {
        ok(
            s,
            p,
            Action::Move {
                from,
                class,
                fighters,
            },
        );
    }
    ok(s, p, Action::EndMovement);
}

/// Plays the game to its agenda phase (T20): strategic actions with every secondary declined, then passes;
/// in the status phase each gained token goes to the tactic pool and the sheet keeps its counts; no action
/// card is played at the start of a strategy phase.
#[track_caller]
pub fn play_to_agenda_phase(s: &mut State) {
    use coffer_command_tokens::Phase;
    let mut guard = 0;
    while s.flow.phase != Phase::Agenda {
        guard += 1;
        assert!(guard < 1000, "the agenda phase does not come");
        let p = actor(s);
        let a = match s.flow.step {
            Step::Gain => Action::Gain { pool: Pool::Tactic },
            Step::Redistribute => {
                let [tactic, fleet, strategy, _] = sheet(s, p).map(|n| n as u8);
                Action::Redistribute {
                    tactic,
                    fleet,
                    strategy,
                }
            }
            Step::StrategyWindow => Action::NoCard,
            _ => simple_action(s, p),
        };
        ok(s, p, a);
    }
}

/// Plays `games` seeded random playouts of `config` with `players`, checking every invariant after each
/// action and that each game ends; `seen` sees the state and the action after each one.
#[track_caller]
pub fn playouts_keep_invariants(
    players: u16,
    config: &Config,
    games: u64,
    mut seen: impl FnMut(&State, Action),
) {
    let ruleset = CommandTokens::new();
    for seed in 0..games {
        let mut s = ruleset
            .new_game(players, seed, config)
            .expect("game starts");
        random_playout(&mut s, seed, |s, a| {
            if let Err(e) = s.check_invariants() {
                panic!("{e} after {a:?}");
            }
            seen(s, a);
        });
        assert_eq!(s.actor(), None, "game {seed} ends");
    }
}

/// A small deterministic generator for random playouts (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    /// The next value below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// Plays uniformly random legal actions until the game is over; `after` sees the state after each one.
/// Returns the number of actions.
pub fn random_playout(s: &mut State, seed: u64, mut after: impl FnMut(&State, Action)) -> usize {
    let mut rng = Rng(seed);
    let mut n = 0;
    let mut out = Vec::new();
    while let Some(p) = s.actor() {
        out.clear();
        s.legal_actions(p, &mut out);
        assert!(
            !out.is_empty(),
            "{p} must act but has no legal action ({:?})",
            s.flow.step
        );
        let a = out[rng.below(out.len())];
        ok(s, index(p), a);
        after(s, a);
        n += 1;
        assert!(n < 100_000, "the playout does not end");
    }
    n
}

/// The last system free of `p`'s command tokens.
#[track_caller]
pub fn free_system(s: &State, p: u8) -> u16 {
    (0..s.rules.system_count())
        .rev()
        .find(|&z| !s.has_token(owner(p), z))
        .expect("a free system") as u16
}

/// Uses `p`'s turn for a tactical action in the last system free of their tokens, producing nothing.
#[track_caller]
pub fn skip(s: &mut State, p: u8) {
    let system = free_system(s, p);
    ok(s, p, Action::Tactical { system });
    ok(s, p, Action::Done);
}

/// A random action of any kind, legal or not, with indices a little past the content's ranges.
pub fn random_action(rng: &mut Rng) -> Action {
    let pool = |rng: &mut Rng| Pool::ALL[rng.below(3)];
    let small = |rng: &mut Rng, n: usize| rng.below(n) as u8;
    match rng.below(25) {
        0 => Action::Pick {
            card: small(rng, 10),
        },
        1 => Action::Tactical {
            system: rng.below(16) as u16,
        },
        2 => Action::Produce {
            class: small(rng, 7),
        },
        3 => Action::Done,
        4 => Action::Strategic {
            card: small(rng, 10),
        },
        5 => Action::Pass,
        6 => Action::Gain { pool: pool(rng) },
        7 => Action::Buy {
            influence: rng.below(12) as u32,
        },
        8 => Action::Secondary,
        9 => Action::Decline,
        10 => Action::Diplomacy {
            system: rng.below(16) as u16,
        },
        11 => Action::Fallback { pool: pool(rng) },
        12 => Action::RemoveToken {
            system: rng.below(16) as u16,
        },
        13 => Action::Place {
            system: rng.below(16) as u16,
            fallback: [None, Some(pool(rng))][rng.below(2)],
        },
        14 => Action::Redistribute {
            tactic: small(rng, 12),
            fleet: small(rng, 12),
            strategy: small(rng, 12),
        },
        15 => Action::RemoveShip {
            system: rng.below(16) as u16,
            class: small(rng, 7),
        },
        16 => Action::Move {
            from: rng.below(16) as u16,
            class: small(rng, 7),
            fighters: small(rng, 6),
        },
        17 => Action::EndMovement,
        18 => Action::AnnounceRetreat,
        19 => Action::NoRetreat,
        20 => Action::Roll {
            hits: small(rng, 12),
        },
        21 => Action::Destroy {
            class: small(rng, 7),
        },
        22 => Action::Retreat {
            system: rng.below(16) as u16,
            fallback: [None, Some(pool(rng))][rng.below(2)],
        },
        23 => Action::Release {
            player: rng.below(9) as u16,
        },
        _ => Action::FreeSecondaries {
            players: coffer_command_tokens::Players(rng.below(256) as u8),
        },
    }
}

// The line galaxy of the movement and unit tests: systems a - b - c - d, with e off c and f off a
// (indices 0 to 5).
pub const A: u16 = 0;
pub const B: u16 = 1;
pub const C: u16 = 2;
pub const D: u16 = 3;
pub const E: u16 = 4;
pub const F: u16 = 5;

/// Ship-class ids of data/ships.json, by index.
pub const CLASSES: [&str; 6] = [
    "fighter",
    "destroyer",
    "cruiser",
    "carrier",
    "dreadnought",
    "war_sun",
];

/// A three-player configuration on the line galaxy with the given factions and laws, and `ships` as
/// (system, player, class index, count).
pub fn battlefield_config(
    factions: [&str; 3],
    laws: &[&str],
    ships: &[(u16, u16, u8, u32)],
) -> Config {
    let ids = ["a", "b", "c", "d", "e", "f"];
    let adjacent = [&["b", "f"][..], &["c"], &["d", "e"], &[], &[], &[]];
    let galaxy = ids
        .iter()
        .zip(adjacent)
        .enumerate()
        .map(|(i, (id, adj))| SystemConfig {
            id: (*id).into(),
            ships: ships
                .iter()
                .filter(|sh| usize::from(sh.0) == i)
                .map(|&(_, player, class, count)| ShipsConfig {
                    player,
                    class: CLASSES[usize::from(class)].into(),
                    count,
                })
                .collect(),
            no_diplomacy: false,
            adjacent: adj.iter().map(|a| (*a).to_string()).collect(),
        })
        .collect();
    Config {
        galaxy,
        factions: factions.map(String::from).to_vec(),
        laws: laws.iter().map(|l| l.to_string()).collect(),
        ..Default::default()
    }
}

/// A three-player game of `config` at p0's first turn: p0 holds Leadership and Construction, p1 Diplomacy
/// and Trade, p2 Politics and Warfare.
pub fn start(config: Config) -> State {
    let mut s = game(3, config);
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    assert_eq!(actor(&s), 0);
    s
}

/// A configuration for random playouts: these factions, each player's technologies, and this many rounds.
pub fn playout_config(factions: &[&str], technologies: &[&[&str]], rounds: u16) -> Config {
    Config {
        factions: strings(factions),
        technologies: technologies.iter().map(|ids| strings(ids)).collect(),
        rounds,
        ..Config::default()
    }
}
