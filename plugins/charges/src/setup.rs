//! Setting up a `charges` game: the configuration checked, then each squad's ships with their tracks,
//! tokens and permanents on a new ledger, in a fixed order (state hashes depend on it).

use crate::content::{
    Charge, Content, ContentError, MAX_SHIPS_PER_PLAYER, MAX_UPGRADES, Pays, Pilot, Size, Upgrade,
};
use crate::state::{
    Card, CardKind, Config, ForceRecovery, MAX_ROUNDS, Ship, ShipChoice, Stage, State,
    card_subject, default_squads, kind,
};
use coffer_core::{
    AmountSpec, Cause, Key, Kind, Ledger, Owner, Recurrence, Scope, SetupError, TrackId, TrackSpec,
};

fn config_error(e: impl std::fmt::Display) -> SetupError {
    SetupError::Config(e.to_string())
}

fn content_error(e: ContentError) -> SetupError {
    SetupError::Content(e.to_string())
}

/// Ids for an error message: "a, b, c".
fn known<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.collect::<Vec<_>>().join(", ")
}

/// Builds a game: every ship's tracks, tokens and permanents on a new ledger.
///
/// # Errors
/// [`SetupError`] for bad content, an unknown id, a squad that does not fit, or a player count without squad.
pub fn setup(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
    let content = match &config.content {
        Some(c) => {
            c.validate().map_err(content_error)?;
            c
        }
        None => Content::builtin().map_err(content_error)?,
    };
    let defaults;
    let squads = if config.squads.is_empty() {
        defaults = default_squads();
        &defaults[..usize::from(players).min(defaults.len())]
    } else {
        &config.squads[..]
    };
    if squads.len() != usize::from(players) {
        return Err(config_error(format!(
            "`squads`: {} {} given for {players} players; give one squad per player",
            squads.len(),
            if squads.len() == 1 { "squad" } else { "squads" }
        )));
    }
    if config.max_rounds == 0 || config.max_rounds > MAX_ROUNDS {
        return Err(config_error(format!(
            "`max_rounds` is {}: give 1-{MAX_ROUNDS} rounds",
            config.max_rounds
        )));
    }
    let mut ledger = Ledger::new(players, seed);
    let mut ships: Vec<Ship> = Vec::new();
    let policy = match config.force_recovery {
        ForceRecovery::Highest => Recurrence::Max,
        ForceRecovery::One => Recurrence::Fixed(1),
    };
    for (p, squad) in squads.iter().enumerate() {
        let owner = Owner(p as u16);
        if squad.is_empty() || squad.len() > MAX_SHIPS_PER_PLAYER {
            return Err(config_error(format!(
                "`squads`: {owner}'s squad has {} ships; a squad has 1-{MAX_SHIPS_PER_PLAYER}",
                squad.len()
            )));
        }
        for (n, choice) in squad.iter().enumerate() {
            let (pilot, upgrades) = resolve(content, owner, n, choice)?;
            let ship = add_ship(&mut ledger, &ships, owner, pilot, &upgrades, policy)?;
            ships.push(ship);
        }
    }
    let done = (0..players)
        .map(|p| ledger.add_permanent(Key::new(Owner(p), kind::DONE, 0), Some(Scope::Act)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(State {
        ledger,
        ships,
        done,
        attack: None,
        max_rounds: config.max_rounds,
        winners: None,
        current: None,
    })
}

/// `owner`'s ship `n` of the squad: its pilot and upgrades from the content, checked to fit (upgrades
/// per ship, huge-only upgrades, abilities paid with a Force or energy capacity the ship has, C14, C20).
fn resolve<'c>(
    content: &'c Content,
    owner: Owner,
    n: usize,
    choice: &ShipChoice,
) -> Result<(&'c Pilot, Vec<&'c Upgrade>), SetupError> {
    let pilot = content.pilot(&choice.pilot).ok_or_else(|| {
        config_error(format!(
            "`squads`: {owner}'s ship {n}: unknown pilot '{}'; known: {}",
            choice.pilot,
            known(content.pilots.iter().map(|p| p.id.as_str()))
        ))
    })?;
    if choice.upgrades.len() > MAX_UPGRADES {
        return Err(config_error(format!(
            "`squads`: {owner}'s ship {n} ('{}') has {} upgrades; a ship carries 0-{MAX_UPGRADES}",
            choice.pilot,
            choice.upgrades.len()
        )));
    }
    let huge = pilot.size == Size::Huge;
    let mut upgrades = Vec::new();
    for id in &choice.upgrades {
        let u = content.upgrade(id).ok_or_else(|| {
            config_error(format!(
                "`squads`: {owner}'s ship {n} ('{}'): unknown upgrade '{id}'; known: {}",
                choice.pilot,
                known(content.upgrades.iter().map(|u| u.id.as_str()))
            ))
        })?;
        if (u.huge_only || u.energy.value > 0) && !huge {
            return Err(config_error(format!(
                "`squads`: {owner}'s ship {n}: upgrade '{id}' goes only on a huge ship, and '{}' is {}",
                choice.pilot,
                pilot.size.name()
            )));
        }
        upgrades.push(u);
    }
    // C14, C20: an ability paid with the Force (or energy) needs a ship whose Force (or energy)
    // capacity can ever pay it.
    let force_capacity = u32::from(pilot.force.value)
        + upgrades
            .iter()
            .map(|u| u32::from(u.force.value))
            .sum::<u32>();
    let energy_capacity = u32::from(pilot.energy.value)
        + upgrades
            .iter()
            .map(|u| u32::from(u.energy.value))
            .sum::<u32>();
    let abilities = std::iter::once((pilot.id.as_str(), pilot.ability))
        .chain(upgrades.iter().map(|u| (u.id.as_str(), u.ability)));
    for (card, ability) in abilities {
        let Some(a) = ability else { continue };
        let (what, capacity) = match a.pays {
            Pays::Force => ("Force", force_capacity),
            Pays::Energy => ("energy", energy_capacity),
            Pays::Charges => continue,
        };
        if u32::from(a.cost) > capacity {
            return Err(config_error(format!(
                "`squads`: {owner}'s ship {n} ('{}'): the ability of '{card}' costs {} {what}, and the ship's {what} capacity is {capacity}",
                choice.pilot, a.cost
            )));
        }
    }
    Ok((pilot, upgrades))
}

/// A ship's shared track of kind `k` (C5, K3.7): the ship card's printed value, then each upgrade's
/// capacity (`part` of it); none when they add up to 0.
fn shared_track(
    ledger: &mut Ledger,
    key: Key,
    printed: Charge,
    policy: Recurrence,
    upgrades: &[&Upgrade],
    part: fn(&Upgrade) -> Charge,
) -> Result<Option<TrackId>, SetupError> {
    let total: u32 = u32::from(printed.value)
        + upgrades
            .iter()
            .map(|u| u32::from(part(u).value))
            .sum::<u32>();
    if total == 0 {
        return Ok(None);
    }
    let spec = TrackSpec::new(key, u32::from(printed.value))
        .recurring(i32::from(printed.recurs), Scope::Act)
        .policy(policy);
    let t = ledger.add_track(spec)?;
    let ship = key.subject as usize;
    for (c, u) in upgrades.iter().enumerate() {
        let add = part(u);
        if add.value > 0 {
            ledger.add_capacity(
                t,
                card_subject(ship, c + 1),
                u32::from(add.value),
                i32::from(add.recurs),
                Cause::Setup,
            )?;
        }
    }
    Ok(Some(t))
}

/// The card of `owner`'s ship `ship` at `c` (0: the ship card): its own charge track, if it has charges,
/// and its per-round permanent.
fn card(
    ledger: &mut Ledger,
    owner: Owner,
    ship: usize,
    c: usize,
    charge: Charge,
    unrecoverable: bool,
) -> Result<(Option<TrackId>, coffer_core::PermanentId), SetupError> {
    let track = if charge.value == 0 {
        None
    } else {
        let mut spec = TrackSpec::new(
            Key::new(owner, kind::CHARGE, card_subject(ship, c)),
            u32::from(charge.value),
        )
        .recurring(i32::from(charge.recurs), Scope::Act);
        if unrecoverable {
            spec = spec.unrecoverable();
        }
        Some(ledger.add_track(spec)?)
    };
    let used = ledger.add_permanent(
        Key::new(owner, kind::USED, card_subject(ship, c)),
        Some(Scope::Act),
    )?;
    Ok((track, used))
}

/// `owner`'s next ship (after `ships`), flying `pilot` with `upgrades`: its tracks, cards, tokens and
/// turn on the ledger.
fn add_ship(
    ledger: &mut Ledger,
    ships: &[Ship],
    owner: Owner,
    pilot: &Pilot,
    upgrades: &[&Upgrade],
    policy: Recurrence,
) -> Result<Ship, SetupError> {
    let i = ships.len();
    let ship_key = |k: Kind| Key::new(owner, k, i as u32);
    let shields = shared_track(
        ledger,
        ship_key(kind::SHIELD),
        pilot.shields,
        Recurrence::Sum,
        upgrades,
        |u| u.shields,
    )?;
    let force = shared_track(
        ledger,
        ship_key(kind::FORCE),
        pilot.force,
        policy,
        upgrades,
        |u| u.force,
    )?;
    // C10: energy recovers only per the ship card's recurring symbols.
    let energy = shared_track(
        ledger,
        ship_key(kind::ENERGY),
        pilot.energy,
        Recurrence::Fixed(i32::from(pilot.energy.recurs)),
        upgrades,
        |u| u.energy,
    )?;
    let mut cards = Vec::new();
    let (track, used) = card(ledger, owner, i, 0, pilot.charges, pilot.unrecoverable)?;
    cards.push(Card {
        kind: CardKind::Ship,
        track,
        used,
        ability: pilot.ability,
        attack: 0,
    });
    for (c, u) in upgrades.iter().enumerate() {
        let (track, used) = card(ledger, owner, i, c + 1, u.charges, u.unrecoverable)?;
        cards.push(Card {
            kind: CardKind::Upgrade(u.slot),
            track,
            used,
            ability: u.ability,
            attack: u.attack.unwrap_or(0),
        });
    }
    let mut circular = |k: Kind| ledger.add_amount(AmountSpec::new(ship_key(k)).lasts(Scope::Act));
    let focus = circular(kind::FOCUS)?;
    let evade = circular(kind::EVADE)?;
    let disarm = circular(kind::DISARM)?;
    let stress = ledger.add_amount(AmountSpec::new(ship_key(kind::STRESS)))?;
    let facedown = ledger.add_amount(AmountSpec::new(ship_key(kind::FACEDOWN)))?;
    let faceup = ledger.add_amount(AmountSpec::new(ship_key(kind::FACEUP)))?;
    let turn = ledger.add_permanent(ship_key(kind::TURN), Some(Scope::Phase))?;
    // Two ships of one player with the same pilot are told apart by a number.
    let same = ships
        .iter()
        .filter(|s| s.owner == owner && s.card_names[0] == pilot.name)
        .count();
    let name = if same == 0 {
        pilot.name.clone()
    } else {
        format!("{} #{}", pilot.name, same + 1)
    };
    let mut card_names = Vec::with_capacity(1 + upgrades.len());
    card_names.push(pilot.name.clone());
    card_names.extend(upgrades.iter().map(|u| u.name.clone()));
    Ok(Ship {
        reserve: false,
        owner,
        pilot: pilot.id.clone(),
        name,
        card_names,
        initiative: pilot.initiative,
        attack: pilot.attack,
        agility: pilot.agility,
        hull: pilot.hull,
        huge: pilot.size == Size::Huge,
        actions: pilot.actions,
        cards,
        shields,
        force,
        energy,
        focus,
        evade,
        disarm,
        stress,
        facedown,
        faceup,
        turn,
        planned: None,
        revealed: false,
        stage: Stage::default(),
    })
}
