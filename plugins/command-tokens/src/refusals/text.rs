//! The words of a refusal: [`Refused::text`], one helper per room of the rules, naming systems, ship
//! classes, cards and abilities from the state.

use crate::actions::Players;
use crate::config::{MAX_PREREQUISITES, MAX_RIDERS};
use crate::ids::Pool;
use crate::refusals::Refused;
use crate::state::State;
use crate::words::count;

/// A sentence that starts with a system's name.
fn system_says(s: &State, system: u16, rest: &str) -> String {
    format!("{} {rest}", s.system_name(system))
}

impl Refused {
    /// The reason in words, exactly as a player reads it.
    pub(crate) fn text(self, s: &State) -> String {
        self.tactical_text(s)
            .or_else(|| self.token_text(s))
            .or_else(|| self.strategy_text(s))
            .or_else(|| self.movement_text(s))
            .or_else(|| self.ability_text(s))
            .or_else(|| self.card_text(s))
            .or_else(|| self.agenda_text(s))
            .or_else(|| self.combat_text(s))
            .or_else(|| self.dispatch_text(s))
            .unwrap_or_else(|| unreachable!("every refusal has words: {self:?}"))
    }

    /// The words of a tactical-action refusal.
    fn tactical_text(self, s: &State) -> Option<String> {
        Some(match self {
            Refused::NoTacticToken(p) => format!("{p} has no token in the tactic pool"),
            Refused::HoldsToken(p, system) => format!(
                "{} already holds a command token of {p}",
                s.system_name(system)
            ),
            Refused::ProductionUsed(p, built) => format!(
                "{p} has produced {built} ships in this tactical action, the most one tactical action produces"
            ),
            Refused::MayNotProduce(p, class) => format!(
                "{p} cannot produce a {}: neither their faction nor a technology they own unlocks it",
                s.class_name(class)
            ),
            Refused::NoShipLeft(p, class) => {
                format!("{p} has no {} left in reinforcements", s.class_name(class))
            }
            Refused::EnemyShips(q, system) => format!(
                "{q} has ships in {}: no ships are produced in a system holding another player's ships",
                s.system_name(system)
            ),
            Refused::NoStarForge(p) => format!(
                "{p}'s faction, {}, has no Star Forge",
                s.rules.faction_names[p.index()]
            ),
            Refused::ForgeClass(p, class) => {
                let choices: Vec<String> = s.rules.star_forge[p.index()]
                    .iter()
                    .flat_map(|forge| &forge.place)
                    .map(|&(k, n)| format!("{} (up to {n})", s.class_name(k)))
                    .collect();
                format!(
                    "Star Forge places {}, not {}",
                    choices.join(" or "),
                    s.class_name(class)
                )
            }
            Refused::ForgeNoShip { p, system, with } => format!(
                "{} holds no {} of {p}'s: Star Forge places ships only where one is",
                s.system_name(system),
                s.class_name(with)
            ),
            Refused::ForgeCost { p, cost, have } => format!(
                "Star Forge spends {} from the strategy pool, but {p} has {have}",
                count(u32::from(cost), "token", "tokens")
            ),
            Refused::NoSuchComponent(ability) => format!(
                "component action #{ability} does not exist: this game has {}",
                count(
                    s.rules.abilities.len() as u32,
                    "component action",
                    "component actions"
                )
            ),
            Refused::NotYourAbility(p, ability) => {
                let a = &s.rules.abilities[usize::from(ability)];
                format!("{} is p{}'s, not {p}'s", a.name, a.player)
            }
            Refused::AbilityUsed(p, ability) => format!(
                "{p} has already used {} this round: its card is exhausted",
                s.rules.abilities[usize::from(ability)].name
            ),
            Refused::AbilityCost {
                p,
                ability,
                cost,
                have,
            } => format!(
                "{} spends {} from the strategy pool, but {p} has {have}",
                s.rules.abilities[usize::from(ability)].name,
                count(u32::from(cost), "token", "tokens")
            ),
            Refused::PassFirst(p, card) => format!(
                "{p} cannot pass before the strategic action of {}",
                s.rules.cards[usize::from(card)].name
            ),
            Refused::NoFleetChoice => "no fleet-limit choice is pending".into(),
            Refused::NotOverFleet(p, system) => format!(
                "{p} is not over the fleet limit in {}",
                s.system_name(system)
            ),
            Refused::NotFleetClass(class) => format!(
                "the {} class does not count toward the fleet limit",
                s.class_name(class)
            ),
            Refused::NoShipIn(p, class, system) => format!(
                "{p} has no {} in {}",
                s.class_name(class),
                s.system_name(system)
            ),
            _ => return None,
        })
    }

    /// The words of a command-token refusal.
    fn token_text(self, s: &State) -> Option<String> {
        Some(match self {
            Refused::FleetPoolFull(p) => {
                let others = match s.captured(p) {
                    0 => String::new(),
                    k => format!(" ({} of other players')", count(k, "token", "tokens")),
                };
                format!(
                    "{p}'s fleet pool holds {}{others}, the law's maximum",
                    s.fleet_tokens(p)
                )
            }
            Refused::NoTokenToGain(p) => format!("{p} has no token in reinforcements to gain"),
            Refused::Overspend { p, influence, have } => format!(
                "{p} cannot spend {influence} influence: they have {have} (0 to {have} may be spent)"
            ),
            Refused::BuysTooMany {
                p,
                influence,
                tokens,
            } => format!(
                "{influence} influence buys {tokens} tokens but {p} has {} in reinforcements",
                s.reinforcements(p)
            ),
            Refused::NoDiplomacy(card, system) => format!(
                "{} cannot choose {}",
                s.card_name(card),
                s.system_name(system)
            ),
            Refused::PoolEmpty(p, pool) => format!(
                "{p}'s {} is empty: the token must come from a pool that holds one",
                pool.name()
            ),
            Refused::NoTokenIn(p, system) => {
                format!("{p} has no command token in {}", s.system_name(system))
            }
            Refused::NameAPool(p) => {
                format!("{p}'s reinforcements are empty: name the pool the token comes from")
            }
            Refused::NoFallback(p, pool) => format!(
                "{p} places from reinforcements or into a system holding their token: no fallback pool is taken (not the {})",
                pool.name()
            ),
            Refused::SheetSum { p, want, total } => {
                let sum: u32 = want.iter().map(|&x| u32::from(x)).sum();
                format!(
                    "{} tactic, {} fleet and {} strategy make {sum} tokens, but {p} has {total} on the command sheet",
                    want[0], want[1], want[2]
                )
            }
            Refused::FleetOverMax { p, fleet, max } => {
                let others = match s.captured(p) {
                    0 => String::new(),
                    k => format!(
                        " with {} of other players' there",
                        count(k, "token", "tokens")
                    ),
                };
                format!("a fleet pool of {fleet}{others} is over the law's maximum of {max}")
            }
            _ => return None,
        })
    }

    /// The words of a strategy-card refusal.
    fn strategy_text(self, s: &State) -> Option<String> {
        Some(match self {
            Refused::CardHeld(card, seat) => {
                format!("{} is already held by p{seat}", s.card_name(card))
            }
            Refused::NotHolding(p, card) => format!("{p} does not hold {}", s.card_name(card)),
            Refused::CardUsed(p, card) => {
                format!("{p} has already used {} this round", s.card_name(card))
            }
            Refused::SecondaryCost(q, card, cost) => format!(
                "{q} has {} strategy tokens; the secondary ability of {} costs {cost}",
                s.pool(q, Pool::Strategy),
                s.card_name(card)
            ),
            Refused::FreeSelf(p, card) => format!(
                "{p} resolves the primary ability of {}: choose other players",
                s.card_name(card)
            ),
            Refused::Eliminated(q) => format!("{q} is eliminated"),
            Refused::NotInGame(q) => format!("{q} is not in this {}-player game", s.players()),
            Refused::NoSwapAbility(p) => {
                format!("{p} has no ready ability to swap strategy cards with")
            }
            Refused::NotHeldByOther(card) => {
                format!("{} is held by no other player", s.card_name(card))
            }
            Refused::PoolDry(p, pool) => format!("{p}'s {} is empty", pool.name()),
            Refused::EliminationOff => "elimination is off in this game: the option `elimination` lets the table declare one".into(),
            Refused::NotSeated(q) => format!("p{q} is not in this {}-player game", s.players()),
            Refused::AlreadyEliminated(q) => format!("{q} is already eliminated"),
            Refused::LastPlayer(q) => format!("{q} is the last player in the game"),
            _ => return None,
        })
    }

    /// The words of a movement refusal.
    fn movement_text(self, s: &State) -> Option<String> {
        Some(match self {
            Refused::Arrived(from) => system_says(
                s,
                from,
                "is the activated system: ships there have already arrived",
            ),
            Refused::TokenHolds(p, from) => format!(
                "{p}'s ships in {} cannot move: the system holds one of {p}'s command tokens",
                s.system_name(from)
            ),
            Refused::NoMoveValue(class) => format!(
                "a {} has no move value: it moves only transported by a ship with capacity",
                s.class_name(class)
            ),
            Refused::NoPath(from, to) => format!(
                "no path of adjacent systems leads from {} to {} without passing through another player's ships",
                s.system_name(from),
                s.system_name(to)
            ),
            Refused::TooFar {
                class,
                reach,
                from,
                distance,
                to,
            } => format!(
                "a {} moves {}, but {} is {} away from {}",
                s.class_name(class),
                count(u32::from(reach), "system", "systems"),
                s.system_name(from),
                count(u32::from(distance), "system", "systems"),
                s.system_name(to)
            ),
            Refused::OverCapacity {
                class,
                capacity,
                fighters,
            } => format!(
                "a {} transports at most {capacity}, not {fighters}",
                s.class_name(class)
            ),
            Refused::FewFighters {
                p,
                from,
                there,
                fighters,
            } => format!(
                "{p} has {} in {}, not {fighters}",
                count(there, "fighter", "fighters"),
                s.system_name(from)
            ),
            Refused::NoTransported => {
                "this game has no transported ship class: a moving ship carries none".into()
            }
            _ => return None,
        })
    }

    /// The words of an ability refusal.
    fn ability_text(self, s: &State) -> Option<String> {
        let name = |i: u8| &s.rules.abilities[usize::from(i)].name;
        Some(match self {
            Refused::NotUsableNow(p, ability) => {
                format!("{} (#{ability}) cannot be used by {p} now", name(ability))
            }
            Refused::NoSuchAbility(ability) => format!(
                "ability #{ability} does not exist: this game has {}",
                count(s.rules.abilities.len() as u32, "ability", "abilities")
            ),
            Refused::AbilityNeedsPool(i) => {
                format!("{} needs the `pool` of the command token gained", name(i))
            }
            Refused::FleetAtMax(p) => format!("{p}'s fleet pool holds the law's maximum"),
            Refused::AbilityTakesNoSystem(i) => format!("{} takes no `system`", name(i)),
            Refused::AbilityNeedsSystem(i) => format!("{} needs a `system` to move to", name(i)),
            Refused::ForesightTarget(from, to) => format!(
                "Foresight moves ships to a system adjacent to {} that holds no other player's ships, not {}",
                s.system_name(from),
                s.system_name(to)
            ),
            Refused::NoRedistributeAbility(p) => {
                format!("{p} has no ready ability to redistribute with")
            }
            _ => return None,
        })
    }

    /// The words of an action-card refusal.
    fn card_text(self, s: &State) -> Option<String> {
        let name = |i: u8| &s.rules.hands[usize::from(i)].name;
        Some(match self {
            Refused::NoSuchActionCard(card) => format!(
                "action card #{card} does not exist: this game dealt {}",
                count(s.rules.hands.len() as u32, "action card", "action cards")
            ),
            Refused::NotInHand(p, card) => format!(
                "{} (#{card}) is in p{}'s hand, not {p}'s",
                name(card),
                s.rules.hands[usize::from(card)].player
            ),
            Refused::CardPlayed(p, card) => {
                format!("{p} has already played {} (#{card})", name(card))
            }
            Refused::WrongWindow(card, now) => format!(
                "{} is played {}, not {}",
                name(card),
                s.rules.hands[usize::from(card)].window.when(),
                now.when()
            ),
            Refused::CardNeeds(card, what) => format!("{} needs a `{what}`", name(card)),
            Refused::CardTakesNo(card, what) => format!("{} takes no `{what}`", name(card)),
            Refused::Prediction(card) => format!(
                "{} predicts an outcome {}: `vote` (for or against) or `elect` (a player still in the game)",
                name(card),
                match s.rules.agendas.get(usize::from(s.flow.agenda)) {
                    Some(a) if a.elect_player => format!("of {}, which elects a player", a.name),
                    Some(a) => format!("of {}, which is For or Against", a.name),
                    None => "of the agenda".to_string(),
                }
            ),
            Refused::NotTarget(card, seat) => format!(
                "{} targets another player still in the game, not p{seat}",
                name(card)
            ),
            Refused::NoTokenOfYours(p, system) => {
                format!("{} holds no command token of {p}'s", s.system_name(system))
            }
            Refused::JamSystem(p, card, system) => format!(
                "{} chooses a system that is no home system and holds or is adjacent to one of {p}'s ships, not {}",
                name(card),
                s.system_name(system)
            ),
            Refused::JamPlayer { card, system, seat } => format!(
                "{} places a token of another player still in the game with one in reinforcements and none in {}, not p{seat}'s",
                name(card),
                s.system_name(system)
            ),
            Refused::RidersFull => format!("{MAX_RIDERS} riders are played on this agenda already"),
            Refused::NothingToCancel => "no action card waits on cancelling".into(),
            Refused::NoCancelAbility(q, card) => {
                format!("{q} has no ready ability to cancel {} with", name(card))
            }
            _ => return None,
        })
    }

    /// The words of an agenda refusal.
    fn agenda_text(self, s: &State) -> Option<String> {
        let name = |a: u8| &s.rules.agendas[usize::from(a)].name;
        Some(match self {
            Refused::NoSuchAgenda(a) => match s.rules.agendas.len() {
                0 => format!("agenda #{a} does not exist: this game models no agenda"),
                count => format!(
                    "agenda #{a} does not exist: this game has agendas #0 to #{}",
                    count - 1
                ),
            },
            Refused::AgendaRevealed(a) => {
                format!("{} has already been revealed this game", name(a))
            }
            Refused::NotForAgainst(a) => {
                let agenda = &s.rules.agendas[usize::from(a)];
                format!(
                    "{} elects a {}: its outcome is not For or Against",
                    agenda.name,
                    if agenda.elect_player {
                        "player"
                    } else {
                        "strategy card"
                    }
                )
            }
            Refused::AgainstOnly => {
                "who voted Against is entered only for an Against outcome that concerns them".into()
            }
            Refused::VotersOut(seats) => format!(
                "voted_against names {}, but only players still in the game vote",
                Players(seats).names()
            ),
            Refused::ElectsNoPlayer(a) => {
                format!(
                    "{}'s outcome is For or Against: it elects no player",
                    name(a)
                )
            }
            Refused::EliminatedElected(player) => {
                format!("p{player} is eliminated and cannot be elected")
            }
            Refused::ElectsNoCard(a) => format!("{} elects no strategy card", name(a)),
            Refused::NoAgendaCard => {
                "an agenda that does nothing to command tokens elects no strategy card here".into()
            }
            Refused::NoMinister(p) => format!("{p} does not hold Minister of War"),
            Refused::NoVoterAbility(p) => format!("{p} has no ready ability to name a voter with"),
            Refused::NameAnother(ability, player) => format!(
                "{} names another player still in the game, not p{player}",
                s.rules.abilities[usize::from(ability)].name
            ),
            Refused::Prerequisites(count) => {
                format!("a technology has 0 to {MAX_PREREQUISITES} prerequisites, not {count}")
            }
            _ => return None,
        })
    }

    /// The words of a combat or retreat refusal.
    fn combat_text(self, s: &State) -> Option<String> {
        Some(match self {
            Refused::TooManyHits(p, dice) => format!(
                "{p} rolls {} for their ships in the combat: at most {}",
                count(dice, "die", "dice"),
                count(dice, "hit", "hits")
            ),
            Refused::NoCaptureZone(winner) => format!("{winner} places no other player's token"),
            Refused::NoOwnFleetToken(p) => format!("{p}'s fleet pool holds none of {p}'s tokens"),
            Refused::NoTokenOf(p, q) => format!("{p}'s fleet pool holds no command token of {q}'s"),
            Refused::NotAdjacent(to, from) => format!(
                "{} is not adjacent to {}",
                s.system_name(to),
                s.system_name(from)
            ),
            Refused::RetreatIntoEnemy(to) => {
                system_says(s, to, "holds another player's ships: no retreat goes there")
            }
            Refused::RetreatNoUnits(p, to) => format!(
                "{} holds none of {p}'s ships: a retreat goes to a system holding the player's units",
                s.system_name(to)
            ),
            Refused::RetreatNoFallback(p, from) => format!(
                "no ship of {p}'s can move out of {}: no command token is placed, so no fallback pool is taken",
                s.system_name(from)
            ),
            Refused::SkilledIntoEnemy(to) => system_says(
                s,
                to,
                "holds another player's ships: Skilled Retreat moves ships only where none are",
            ),
            _ => return None,
        })
    }

    /// The words of a refusal at dispatch or of an id out of range.
    fn dispatch_text(self, s: &State) -> Option<String> {
        Some(match self {
            Refused::NotPossible(action, step) => format!(
                "{} is not possible {}",
                s.action_text(&action),
                step.while_text()
            ),
            Refused::MustResolve(p, card) => format!(
                "{p} was chosen to resolve the secondary ability of {} without spending a command token, and must resolve it",
                s.card_name(card)
            ),
            Refused::CombatFirst(q, system) => format!(
                "{q} has ships in {}: movement ends (`end_movement`) and a space combat is resolved before production",
                s.system_name(system)
            ),
            Refused::NoSuchSystem(system) => format!(
                "system #{system} does not exist: the galaxy has systems #0 to #{}",
                s.rules.system_count() - 1
            ),
            Refused::NoSuchCard(card) => format!(
                "strategy card #{card} does not exist: this game has cards #0 to #{}",
                s.rules.cards.len() - 1
            ),
            Refused::NoSuchClass(class) => format!(
                "ship class #{class} does not exist: this game has classes #0 to #{}",
                s.rules.class_count() - 1
            ),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    /// `Refused::text` chains one helper per room, each ending in `_ => return None`, so the compiler
    /// cannot see a variant without words: this checks every variant of the enum has exactly one arm here.
    #[test]
    fn every_refusal_has_one_arm_of_words() {
        let decl = include_str!("../refusals.rs");
        let start = decl.find("pub(crate) enum Refused {").expect("the enum");
        let body = &decl[start..start + decl[start..].find("\n}\n").expect("its end")];
        let words = include_str!("text.rs");
        let variants: Vec<&str> = body
            .lines()
            .filter_map(|l| l.strip_prefix("    "))
            .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
            .map(|l| {
                l.split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("")
            })
            .collect();
        assert!(variants.len() > 90, "{variants:?}");
        for v in variants {
            let arm = format!("Refused::{v}");
            let arms = words
                .match_indices(&arm)
                .filter(|&(i, _)| {
                    !words[i + arm.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
                })
                .count();
            assert_eq!(arms, 1, "{arm} has {arms} arms of words");
        }
    }
}
