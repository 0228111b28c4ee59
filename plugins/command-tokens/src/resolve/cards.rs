//! The agendas and the action cards of a game resolved from its configuration (T20, T22, T28).

use crate::config::{AgendaOp, AgendaRule, Config, HandCard, MAX_HAND_CARDS, MAX_RIDERS, cfg, ids};
use crate::content::{AgendaEffect, Content, Window};
use coffer_core::SetupError;
/// The content's laws: each one's name and fleet-pool maximum, if any.
pub(crate) type LawList = Vec<(String, Option<u8>)>;

/// The content's laws, and with an agenda phase the agendas' outcomes as operations (T20): every law an
/// agenda enacts known and capping the fleet pool at 3 or more.
pub(super) fn agendas(
    config: &Config,
    content: &Content,
) -> Result<(LawList, Vec<AgendaRule>), SetupError> {
    let law_list: Vec<(String, Option<u8>)> = content
        .laws
        .iter()
        .map(|l| (l.name.clone(), l.fleet_pool_max))
        .collect();
    let law_index = |id: &str| {
        content
            .laws
            .iter()
            .position(|l| l.id == id)
            .map(|i| i as u8)
    };
    let mut agendas = Vec::new();
    if config.agenda_phase_from > 0 {
        for a in &content.agendas {
            let ops = |list: &[AgendaEffect]| -> Result<Vec<AgendaOp>, SetupError> {
                list.iter()
                    .map(|e| {
                        Ok(match e {
                            AgendaEffect::Enact { law } => {
                                let Some(i) = law_index(law) else {
                                    return Err(cfg(format!(
                                        "agenda_phase_from: the agenda '{}' enacts the unknown law '{law}'; known: {}",
                                        a.id,
                                        ids(content.laws.iter().map(|l| l.id.as_str()))
                                    )));
                                };
                                if let Some(m) = law_list[usize::from(i)].1.filter(|&m| m < 3) {
                                    return Err(cfg(format!(
                                        "agenda_phase_from: the agenda '{}' enacts '{law}', which caps the fleet pool at {m}, below the starting 3",
                                        a.id
                                    )));
                                }
                                AgendaOp::Enact(i)
                            }
                            AgendaEffect::EachGains { pool, tokens } => {
                                AgendaOp::EachGains(*pool, *tokens)
                            }
                            AgendaEffect::EachReturns { tokens, pool } => {
                                AgendaOp::EachReturns(*tokens, *pool)
                            }
                            AgendaEffect::EachPlacesHome => AgendaOp::EachPlacesHome,
                            AgendaEffect::AgainstVotersReturn { tokens } => {
                                AgendaOp::AgainstVotersReturn(*tokens)
                            }
                            AgendaEffect::AdditionalAction => AgendaOp::AdditionalAction,
                            AgendaEffect::SecondaryForAll => AgendaOp::SecondaryForAll,
                            AgendaEffect::EachPlacesAtWormholes => AgendaOp::EachPlacesAtWormholes,
                            AgendaEffect::ReturnPerPrerequisite => AgendaOp::ReturnPerPrerequisite,
                            AgendaEffect::Standardize {
                                tactic,
                                fleet,
                                strategy,
                            } => AgendaOp::Standardize([*tactic, *fleet, *strategy]),
                        })
                    })
                    .collect()
            };
            agendas.push(AgendaRule {
                name: a.name.clone(),
                elect_player: a.elect_player,
                elect_card: a.elect_strategy_card,
                voters: a
                    .against
                    .iter()
                    .any(|e| matches!(e, AgendaEffect::AgainstVotersReturn { .. })),
                outcomes: [ops(&a.for_)?, ops(&a.against)?, ops(&a.elected)?],
            });
        }
    }
    Ok((law_list, agendas))
}

/// The action cards dealt (T22): known, and no more of a card than the deck holds.
pub(super) fn hands(
    n: usize,
    config: &Config,
    content: &Content,
) -> Result<Vec<HandCard>, SetupError> {
    if !config.action_cards.is_empty() && config.action_cards.len() != n {
        return Err(cfg(format!(
            "action_cards: {} hands given, but {n} players need {n} (or none)",
            config.action_cards.len()
        )));
    }
    let mut hands = Vec::new();
    for (p, hand) in config.action_cards.iter().enumerate() {
        for (j, id) in hand.iter().enumerate() {
            let Some(card) = content.action_card(id) else {
                return Err(cfg(format!(
                    "action_cards[{p}][{j}]: unknown action card '{id}'; known: {}",
                    ids(content.action_cards.iter().map(|c| c.id.as_str()))
                )));
            };
            let dealt = config.action_cards[..p]
                .iter()
                .flatten()
                .chain(&hand[..=j])
                .filter(|&c| c == id)
                .count();
            if dealt > usize::from(card.copies) {
                return Err(cfg(format!(
                    "action_cards[{p}][{j}]: '{id}' is dealt {dealt} times, but the deck holds {}",
                    card.copies
                )));
            }
            hands.push(HandCard {
                player: p as u8,
                name: card.name.clone(),
                window: card.window,
                effect: card.effect,
            });
        }
    }
    Ok(hands)
}

/// Relic fragments in range (T28), and no more cards and riders dealt than a game holds.
pub(super) fn check_relics_and_hands(
    n: usize,
    config: &Config,
    hands: &[HandCard],
) -> Result<(), SetupError> {
    if !config.relic_fragments.is_empty() && config.relic_fragments.len() != n {
        return Err(cfg(format!(
            "relic_fragments: {} counts given, but {n} players need {n} (or none)",
            config.relic_fragments.len()
        )));
    }
    if let Some((i, v)) = config
        .relic_fragments
        .iter()
        .enumerate()
        .find(|&(_, &v)| v > 16)
    {
        return Err(cfg(format!(
            "relic_fragments[{i}]: {v} is out of range: 0 to 16"
        )));
    }
    if hands.len() > MAX_HAND_CARDS {
        return Err(cfg(format!(
            "action_cards: {} cards dealt, but a game deals 0 to {MAX_HAND_CARDS}",
            hands.len()
        )));
    }
    let riders = hands
        .iter()
        .filter(|c| c.window == Window::AfterAgendaRevealed)
        .count();
    if riders > MAX_RIDERS {
        return Err(cfg(format!(
            "action_cards: {riders} riders dealt, but a game deals 0 to {MAX_RIDERS}"
        )));
    }
    Ok(())
}
