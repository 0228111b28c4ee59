//! A game's setup: the configuration prepared once ([`Prepared`]) and a fresh state laid out from it.

use crate::config::{COMMAND_TOKENS, Config, Rules, cfg};
use crate::content::{Content, MAX_CLASSES};
use crate::ids::{face, kind};
use crate::phase::Flow;
use crate::state::{Handles, State, ship_supply};
use coffer_core::{AmountSpec, Cause, Key, Ledger, Owner, Scope, SetupError, Shared, Zone, ZoneId};
use coffer_core::{ContentTable, SharedContent};

/// Ships of one class a player has in a system at the start, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartShips {
    /// System index.
    pub system: usize,
    /// Player.
    pub player: Owner,
    /// Ship-class index.
    pub class: usize,
    /// How many.
    pub count: u32,
}

/// A game's setup resolved and validated from configuration and content once, from which any number of
/// games start without parsing or string work (the ruleset keeps one per player count for the default
/// configuration).
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The rules every game of this setup shares.
    pub rules: Shared<Rules>,
    /// Starting ships.
    pub ships: Vec<StartShips>,
    /// Influence per player per round.
    pub influence: Vec<u32>,
}

impl Prepared {
    /// Resolves and validates a setup.
    ///
    /// # Errors
    /// [`SetupError`] for a bad player count, configuration or content.
    pub fn new(players: u16, config: &Config) -> Result<Prepared, SetupError> {
        let content =
            Content::of(config.content.as_ref()).map_err(|e| SetupError::Content(e.to_string()))?;
        let (rules, galaxy) = Rules::resolve(players, config, &content)?;
        let n = usize::from(players);
        let mut ships = Vec::new();
        let mut placed = vec![0u32; n * rules.class_count()];
        for (si, sys) in galaxy.iter().enumerate() {
            for (j, sh) in sys.ships.iter().enumerate() {
                let c = content.class(&sh.class).unwrap_or(0);
                let p = usize::from(sh.player);
                let total = &mut placed[p * rules.class_count() + c];
                *total = total.saturating_add(sh.count);
                if *total > rules.classes[c].reinforcements {
                    return Err(cfg(format!(
                        "galaxy[{si}].ships[{j}].count: player {p} would have {} {} pieces in the galaxy, but only {} exist",
                        *total, sh.class, rules.classes[c].reinforcements
                    )));
                }
                if sh.count > 0 {
                    ships.push(StartShips {
                        system: si,
                        player: Owner(sh.player),
                        class: c,
                        count: sh.count,
                    });
                }
            }
        }
        let influence = (0..n)
            .map(|p| {
                if config.influence_per_player.is_empty() {
                    config.influence
                } else {
                    config.influence_per_player[p]
                }
            })
            .collect();
        Ok(Prepared {
            rules: Shared::adopt((players, config.clone()), rules),
            ships,
            influence,
        })
    }
}

impl State {
    /// A new game at the start of round 1's strategy phase (T1 layout).
    ///
    /// # Errors
    /// [`SetupError`] for a bad player count, configuration or content.
    pub fn new(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        State::from_prepared(&Prepared::new(players, config)?, seed)
    }

    /// A new game from a prepared setup.
    ///
    /// # Errors
    /// [`SetupError::Refused`] only if the kernel refuses a setup step (a defect).
    pub fn from_prepared(prepared: &Prepared, seed: u64) -> Result<State, SetupError> {
        let rules = &*prepared.rules;
        let n = rules.factions.len();
        let players = n as u16;
        let mut l = Ledger::new(players, seed);
        let g = Owner::GAME;
        let reinforcements = l.add_zone(Zone::new(Key::new(g, kind::REINFORCEMENTS, 0)))?;
        let pools = [
            l.add_zone(Zone::new(Key::new(g, kind::TACTIC, 0)).face(face::FACTION))?,
            l.add_zone(Zone::new(Key::new(g, kind::FLEET, 0)).face(face::SHIP))?,
            l.add_zone(Zone::new(Key::new(g, kind::STRATEGY, 0)).face(face::FACTION))?,
        ];
        let s_count = rules.system_count();
        let c_count = rules.class_count();
        let mut systems = Vec::with_capacity(s_count);
        for s in 0..s_count {
            systems.push(
                l.add_zone(
                    Zone::new(Key::new(g, kind::SYSTEM, s as u32))
                        .one_per_owner()
                        .face(face::FACTION),
                )?,
            );
        }
        let mut ship_reserve = Vec::with_capacity(c_count);
        for c in 0..c_count {
            ship_reserve.push(l.add_zone(
                Zone::new(Key::new(g, kind::SHIP_RESERVE, c as u32)).supply(ship_supply(c)),
            )?);
        }
        let mut ships = Vec::with_capacity(s_count * c_count);
        for i in 0..s_count * c_count {
            ships.push(l.add_zone(
                Zone::new(Key::new(g, kind::SHIPS, i as u32)).supply(ship_supply(i % c_count)),
            )?);
        }
        // Each player has one kernel supply of command tokens (supply 0) and one per ship class (K4): each
        // has its own reinforcements and is conserved on its own by the kernel. A class's pieces are stocked
        // in the galaxy (`stock_on`) and the rest in that class's reinforcements (`stock`), in either order.
        for p in 0..n {
            let owner = Owner(p as u16);
            let mut placed = [0u32; MAX_CLASSES];
            for sh in prepared.ships.iter().filter(|sh| sh.player.index() == p) {
                placed[sh.class] += sh.count;
                l.stock_on(
                    owner,
                    ships[sh.system * c_count + sh.class],
                    sh.count,
                    Cause::Setup,
                )?;
            }
            for c in 0..c_count {
                let rest = rules.classes[c].reinforcements - placed[c];
                if rest > 0 || placed[c] > 0 {
                    l.stock(owner, ship_reserve[c], rest, Cause::Setup)?;
                }
            }
            // T1: 16 tokens, 8 in reinforcements, 3 tactic, 3 fleet, 2 strategy.
            l.stock(owner, reinforcements, COMMAND_TOKENS, Cause::Setup)?;
            l.move_tokens(owner, reinforcements, pools[0], 3, Cause::Setup)?;
            l.move_tokens(owner, reinforcements, pools[1], 3, Cause::Setup)?;
            l.move_tokens(owner, reinforcements, pools[2], 2, Cause::Setup)?;
        }
        let mut influence = Vec::with_capacity(n);
        let mut structures = Vec::with_capacity(n);
        for p in 0..n {
            let owner = Owner(p as u16);
            influence.push(
                l.add_amount(
                    AmountSpec::new(Key::new(owner, kind::INFLUENCE, 0))
                        .start(i64::from(prepared.influence[p]))
                        .lasts(Scope::Act)
                        .resets(),
                )?,
            );
            structures.push(l.add_amount(AmountSpec::new(Key::new(owner, kind::STRUCTURES, 0)))?);
        }
        let mut cards = Vec::with_capacity(rules.cards.len());
        for c in 0..rules.cards.len() {
            cards.push(l.add_permanent(Key::new(g, kind::CARD, c as u32), Some(Scope::Act))?);
        }
        let captured = add_captured(&mut l, rules)?;
        let boxed = add_boxes(&mut l, c_count)?;
        let mut agendas = Vec::with_capacity(rules.agendas.len());
        for a in 0..rules.agendas.len() {
            agendas.push(l.add_permanent(Key::new(g, kind::AGENDA, a as u32), None)?);
        }
        let mut abilities = Vec::with_capacity(rules.abilities.len());
        for (i, a) in rules.abilities.iter().enumerate() {
            let readied = a.exhausts.then_some(Scope::Act);
            abilities.push(l.add_permanent(
                Key::new(Owner(u16::from(a.player)), kind::ABILITY, i as u32),
                readied,
            )?);
        }
        let mut hand = Vec::with_capacity(rules.hands.len());
        for (i, c) in rules.hands.iter().enumerate() {
            hand.push(l.add_permanent(
                Key::new(Owner(u16::from(c.player)), kind::ACTION_CARD, i as u32),
                None,
            )?);
        }
        let mut fragments = Vec::with_capacity(rules.fragments.len());
        for (p, &count) in rules.fragments.iter().enumerate() {
            fragments.push(
                l.add_amount(
                    AmountSpec::new(Key::new(Owner(p as u16), kind::FRAGMENTS, 0))
                        .start(i64::from(count)),
                )?,
            );
        }
        // Every resource is created: the layout is final (and no longer grows, so it gives back its
        // spare capacity before games share it).
        l.shrink_to_fit();
        let h = Handles {
            layout: l.layout(),
            fragments,
            hand,
            abilities,
            agendas,
            reinforcements,
            pools,
            systems,
            ship_reserve,
            ships,
            influence,
            structures,
            cards,
            captured,
            boxed,
        };
        let mut state = State {
            ledger: l,
            rules: prepared.rules.clone(),
            h: Shared::adopt(prepared.rules.key().clone(), h),
            flow: Flow::start(),
        };
        // The handles of a live game of this setup may have been kept instead of these: share their
        // layout (it is equal, setup does not depend on the seed).
        state.ledger.adopt_layout(&state.h.layout);
        for p in state.owners() {
            state.recheck_fleet(p, Cause::Setup);
        }
        // T22: a card played at the start of the strategy phase may be played in the first one too.
        state.strategy_window();
        Ok(state)
    }
}

impl SharedContent for Handles {
    /// The player count and the configuration, as for [`Rules`].
    type Key = (u16, Config);

    /// The handles setup hands out (they depend on neither the seed nor play).
    fn build((players, config): &(u16, Config)) -> Result<Handles, SetupError> {
        let state = State::from_prepared(&Prepared::new(*players, config)?, 0)?;
        Ok(Handles::clone(&state.h))
    }

    fn table() -> &'static ContentTable<Handles> {
        static TABLE: ContentTable<Handles> = ContentTable::new();
        &TABLE
    }
}

/// T17: one zone per player whose fleet pool takes other players' tokens (Edict), `None` for the others.
fn add_captured(l: &mut Ledger, rules: &Rules) -> Result<Vec<Option<ZoneId>>, SetupError> {
    let g = Owner::GAME;
    let mut captured = Vec::with_capacity(rules.capture.len());
    for (p, &capture) in rules.capture.iter().enumerate() {
        captured.push(if capture {
            Some(
                l.add_zone(
                    Zone::new(Key::new(g, kind::CAPTURED, p as u32))
                        .one_per_owner()
                        .face(face::SHIP),
                )?,
            )
        } else {
            None
        });
    }
    Ok(captured)
}

/// T18: the game box, one zone per kernel supply (command tokens, then each of `classes` ship classes),
/// where an eliminated player's pieces go.
fn add_boxes(l: &mut Ledger, classes: usize) -> Result<Vec<ZoneId>, SetupError> {
    let g = Owner::GAME;
    let mut boxed = Vec::with_capacity(classes + 1);
    for supply in 0..=classes {
        let supply = u16::try_from(supply).unwrap_or(u16::MAX);
        boxed
            .push(l.add_zone(Zone::new(Key::new(g, kind::BOX, u32::from(supply))).supply(supply))?);
    }
    Ok(boxed)
}
