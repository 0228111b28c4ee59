//! Refusals: an action the rules do not allow, and why. [`Refused`] is a `Copy` enum of the reasons and
//! the values they name, so a rule allocates nothing until an action is actually refused; its words are
//! in `refusals/text.rs`, and actions written out for them in `refusals/action.rs`.

mod action;
mod text;

use crate::actions::Action;
use crate::content::Window;
use crate::ids::Pool;
use crate::phase::Step;
use crate::state::State;
use coffer_core::{ActionError, Owner};

/// What a rule's effect returns: done, or the reason the action is refused (and the adapter rolls it back).
pub(crate) type Applied = Result<(), ActionError>;

/// Why the rules refuse an action: the reason and the ids and numbers it names, without formatting.
/// [`Refused::error`] writes it in words (naming systems, ships and cards) when an action is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    // ----- tactical action (rules/tactical.rs) -----
    /// The player has no token in the tactic pool.
    NoTacticToken(Owner),
    /// The system already holds one of the player's command tokens.
    HoldsToken(Owner, u16),
    /// The tactical action has produced `built` ships, its most.
    ProductionUsed(Owner, u8),
    /// Neither faction nor technology unlocks the ship class.
    MayNotProduce(Owner, u8),
    /// No ship of the class is left in reinforcements.
    NoShipLeft(Owner, u8),
    /// Another player (the first) has ships in the system: nothing is produced there.
    EnemyShips(Owner, u16),
    /// The player's faction has no Star Forge.
    NoStarForge(Owner),
    /// The player's Star Forge does not place the class.
    ForgeClass(Owner, u8),
    /// The system holds none of the ships (class `with`) Star Forge needs.
    ForgeNoShip {
        /// The player.
        p: Owner,
        /// The system.
        system: u16,
        /// The class that must be there.
        with: u8,
    },
    /// Star Forge costs more strategy tokens than the player has.
    ForgeCost {
        /// The player.
        p: Owner,
        /// The cost.
        cost: u8,
        /// Tokens in the strategy pool.
        have: u32,
    },
    /// No component action with this number.
    NoSuchComponent(u8),
    /// The component action is another player's.
    NotYourAbility(Owner, u8),
    /// The component action's card is exhausted.
    AbilityUsed(Owner, u8),
    /// A component action costs more strategy tokens than the player has.
    AbilityCost {
        /// The player.
        p: Owner,
        /// The ability.
        ability: u8,
        /// The cost.
        cost: u8,
        /// Tokens in the strategy pool.
        have: u32,
    },
    /// The player holds a strategy card (index) whose strategic action is not yet taken.
    PassFirst(Owner, u8),
    /// No fleet-limit choice is pending.
    NoFleetChoice,
    /// The player is not over the fleet limit in the system.
    NotOverFleet(Owner, u16),
    /// The class does not count toward the fleet limit.
    NotFleetClass(u8),
    /// The player has no ship of the class in the system.
    NoShipIn(Owner, u8, u16),

    // ----- command tokens (rules/tokens.rs) -----
    /// The fleet pool is at the law's maximum.
    FleetPoolFull(Owner),
    /// Reinforcements hold no token to gain.
    NoTokenToGain(Owner),
    /// More influence spent than the player has.
    Overspend {
        /// The player.
        p: Owner,
        /// Influence asked to spend.
        influence: u32,
        /// Influence the player has.
        have: u64,
    },
    /// The influence buys more tokens than reinforcements hold.
    BuysTooMany {
        /// The player.
        p: Owner,
        /// Influence spent.
        influence: u32,
        /// Tokens it buys.
        tokens: u32,
    },
    /// The strategy card (the first) cannot choose the system.
    NoDiplomacy(u8, u16),
    /// The pool a token must come from is empty.
    PoolEmpty(Owner, Pool),
    /// The player has no command token in the system.
    NoTokenIn(Owner, u16),
    /// Reinforcements are empty and no pool is named.
    NameAPool(Owner),
    /// A pool is named though reinforcements or the system serve.
    NoFallback(Owner, Pool),
    /// The redistribution does not add up to the command sheet.
    SheetSum {
        /// The player.
        p: Owner,
        /// Tactic, fleet and strategy asked for.
        want: [u8; 3],
        /// Tokens on the command sheet.
        total: u32,
    },
    /// The redistribution's fleet pool is over the law's maximum.
    FleetOverMax {
        /// The player.
        p: Owner,
        /// Fleet tokens asked for.
        fleet: u8,
        /// The law's maximum.
        max: u8,
    },

    // ----- strategy cards (rules/strategy.rs) -----
    /// The strategy card is already held by the seat.
    CardHeld(u8, u8),
    /// The player does not hold the strategy card.
    NotHolding(Owner, u8),
    /// The player has already used the strategy card this round.
    CardUsed(Owner, u8),
    /// The secondary ability of the card costs more strategy tokens than the player has.
    SecondaryCost(Owner, u8, u32),
    /// The player resolving the primary of the card names themselves.
    FreeSelf(Owner, u8),
    /// The player is eliminated.
    Eliminated(Owner),
    /// The player is not in this game.
    NotInGame(Owner),
    /// The player has no ready ability to swap strategy cards with.
    NoSwapAbility(Owner),
    /// The strategy card is held by no other player.
    NotHeldByOther(u8),

    // ----- status, elimination (rules/status.rs, rules/elimination.rs) -----
    /// The pool is empty.
    PoolDry(Owner, Pool),
    /// Elimination is off in this game.
    EliminationOff,
    /// No player in this seat.
    NotSeated(u16),
    /// The player is already eliminated.
    AlreadyEliminated(Owner),
    /// The player is the last one in the game.
    LastPlayer(Owner),

    // ----- movement (rules/movement.rs) -----
    /// The system moved from is the activated system.
    Arrived(u16),
    /// The system moved from holds one of the player's command tokens.
    TokenHolds(Owner, u16),
    /// The ship class has no move value.
    NoMoveValue(u8),
    /// No path leads from the first system to the second.
    NoPath(u16, u16),
    /// The ship's move value does not reach.
    TooFar {
        /// The ship class.
        class: u8,
        /// Its move value.
        reach: u8,
        /// The system it moves from.
        from: u16,
        /// The distance.
        distance: u8,
        /// The activated system.
        to: u16,
    },
    /// More fighters than the class's capacity.
    OverCapacity {
        /// The ship class.
        class: u8,
        /// Its capacity.
        capacity: u8,
        /// Fighters asked for.
        fighters: u8,
    },
    /// Fewer fighters in the system than asked for.
    FewFighters {
        /// The player.
        p: Owner,
        /// The system.
        from: u16,
        /// Fighters there.
        there: u32,
        /// Fighters asked for.
        fighters: u8,
    },
    /// Fighters asked for in a game without a transported class.
    NoTransported,

    // ----- abilities (rules/abilities.rs) -----
    /// The ability cannot be used by the player now.
    NotUsableNow(Owner, u8),
    /// No ability with this number.
    NoSuchAbility(u8),
    /// The ability needs the pool of the command token gained.
    AbilityNeedsPool(u8),
    /// The fleet pool holds the law's maximum.
    FleetAtMax(Owner),
    /// The ability takes no system.
    AbilityTakesNoSystem(u8),
    /// The ability needs a system to move to.
    AbilityNeedsSystem(u8),
    /// Foresight cannot move ships from the first system to the second.
    ForesightTarget(u16, u16),
    /// The player has no ready ability to redistribute with.
    NoRedistributeAbility(Owner),

    // ----- action cards (rules/cards.rs) -----
    /// No action card with this number.
    NoSuchActionCard(u8),
    /// The action card is in another player's hand.
    NotInHand(Owner, u8),
    /// The action card is played already.
    CardPlayed(Owner, u8),
    /// The action card is played in another window than now.
    WrongWindow(u8, Window),
    /// The action card needs this field.
    CardNeeds(u8, &'static str),
    /// The action card takes no such field.
    CardTakesNo(u8, &'static str),
    /// The rider predicts no outcome of the agenda.
    Prediction(u8),
    /// The action card targets a seat not another player still in the game.
    NotTarget(u8, u16),
    /// The system holds no command token of the player's.
    NoTokenOfYours(Owner, u16),
    /// Signal Jamming (the card) chooses a system it may not.
    JamSystem(Owner, u8, u16),
    /// The card places a token of a player (the seat) who may not receive one in the system.
    JamPlayer {
        /// The action card.
        card: u8,
        /// The system.
        system: u16,
        /// The seat.
        seat: u16,
    },
    /// All riders are played on this agenda.
    RidersFull,
    /// No action card waits on cancelling.
    NothingToCancel,
    /// The player has no ready ability to cancel the action card with.
    NoCancelAbility(Owner, u8),

    // ----- agendas (rules/agenda.rs) -----
    /// No agenda with this number.
    NoSuchAgenda(u8),
    /// The agenda has been revealed this game.
    AgendaRevealed(u8),
    /// The agenda elects a player or a strategy card: no For or Against.
    NotForAgainst(u8),
    /// Votes Against are entered for an outcome that does not concern them.
    AgainstOnly,
    /// Players out of the game (a set of seats) named as voting Against.
    VotersOut(u8),
    /// The agenda elects no player.
    ElectsNoPlayer(u8),
    /// The seat elected is eliminated.
    EliminatedElected(u16),
    /// The agenda elects no strategy card.
    ElectsNoCard(u8),
    /// An agenda not modelled elects no strategy card.
    NoAgendaCard,
    /// The player does not hold Minister of War.
    NoMinister(Owner),
    /// The player has no ready ability to name a voter with.
    NoVoterAbility(Owner),
    /// The ability names a seat not another player still in the game.
    NameAnother(u8, u16),
    /// More prerequisites than a technology has.
    Prerequisites(u8),

    // ----- combat and retreats (rules/combat.rs) -----
    /// A roll of more hits than the player's dice.
    TooManyHits(Owner, u32),
    /// The winner of a combat places no other player's token.
    NoCaptureZone(Owner),
    /// The fleet pool holds none of the player's own tokens.
    NoOwnFleetToken(Owner),
    /// The first player's fleet pool holds no token of the second's.
    NoTokenOf(Owner, Owner),
    /// The first system is not adjacent to the second.
    NotAdjacent(u16, u16),
    /// A retreat into a system holding another player's ships.
    RetreatIntoEnemy(u16),
    /// A retreat into a system holding none of the player's ships.
    RetreatNoUnits(Owner, u16),
    /// A fallback pool named for a retreat in which no ship moves out of the system.
    RetreatNoFallback(Owner, u16),
    /// Skilled Retreat into a system holding another player's ships.
    SkilledIntoEnemy(u16),

    // ----- dispatch and ids (apply.rs) -----
    /// The action is not possible at this step.
    NotPossible(Action, Step),
    /// The player was chosen to resolve the secondary of the card for free, and must.
    MustResolve(Owner, u8),
    /// The player (the first) has ships in the activated system: movement ends first.
    CombatFirst(Owner, u16),
    /// No system with this number.
    NoSuchSystem(u16),
    /// No strategy card with this number.
    NoSuchCard(u8),
    /// No ship class with this number.
    NoSuchClass(u8),
}

impl Refused {
    /// The refusal in `s`, in words.
    pub(crate) fn error(self, s: &State) -> ActionError {
        ActionError::Illegal(self.text(s))
    }
}
