//! Codes derived from one list, so a ruleset never numbers them by hand: [`action_codes!`](crate::action_codes)
//! numbers an action enum's variants in the order it lists them and names each; [`numbered_codes!`](crate::numbered_codes)
//! numbers effect and note codes.

/// Numbers the variants of a ruleset's action enum, and names them, from one list.
///
/// `action_codes!(Action { Plan => "Plan", Pass => "Pass" })` gives `Action::code(&self) -> u16` (the
/// number [`Cause::Action`](coffer_kernel::Cause::Action) carries: the variant's place in the list) and
/// `Action::NAMES` (the names in code order, for [`Vocabulary::actions`](coffer_kernel::Vocabulary::actions)).
/// The list must name every variant once: a missing variant fails to compile (the match is exhaustive),
/// and so does one named twice. Codes are part of a ruleset's saved games and event logs: add new
/// actions at the end of the list.
///
/// ```
/// #[derive(Clone, Debug)]
/// enum Action {
///     Take { coins: u8 },
///     Build,
///     Trade(u8, u8),
/// }
///
/// coffer_sdk::action_codes!(Action {
///     Take => "Take",
///     Build => "Build",
///     Trade => "Trade",
/// });
///
/// assert_eq!(Action::Take { coins: 2 }.code(), 0);
/// assert_eq!(Action::Trade(1, 2).code(), 2);
/// assert_eq!(Action::NAMES, ["Take", "Build", "Trade"]);
/// ```
///
/// A variant named twice does not compile:
///
/// ```compile_fail
/// enum Action { Take, Build }
/// coffer_sdk::action_codes!(Action { Take => "Take", Build => "Build", Take => "Again" });
/// ```
#[macro_export]
macro_rules! action_codes {
    ($action:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $action {
            /// Every action's name, in the order of their codes.
            pub const NAMES: [&'static str; [$($name),+].len()] = [$($name),+];

            /// The action's code in `Cause::Action`: its place in the ruleset's list of actions.
            pub fn code(&self) -> u16 {
                // One discriminant per listed variant: a variant listed twice is a duplicate definition.
                #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
                #[repr(u16)]
                enum Code {
                    $($variant),+
                }
                match self {
                    $($action::$variant { .. } => Code::$variant as u16),+
                }
            }
        }
    };
}

/// Declares a ruleset's `u16` codes numbered 0, 1, 2... in the order given, each with its documentation,
/// and `COUNT`, how many there are: the codes of [`Cause::Effect`](coffer_kernel::Cause::Effect) or of the
/// ruleset's own events ([`Change::Note`](coffer_kernel::Change::Note)), numbered once instead of by hand.
/// Codes are part of saved games and event logs: add new ones at the end.
///
/// ```
/// mod note {
///     coffer_sdk::numbered_codes! {
///         /// A card drawn.
///         DREW,
///         /// A card played.
///         PLAYED,
///     }
/// }
/// assert_eq!((note::DREW, note::PLAYED, note::COUNT), (0, 1, 2));
/// ```
#[macro_export]
macro_rules! numbered_codes {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        $crate::numbered_codes!(@ 0; $($(#[$doc])* $name,)*);
    };
    (@ $n:expr;) => {
        /// The number of codes.
        pub const COUNT: usize = $n;
    };
    (@ $n:expr; $(#[$doc:meta])* $name:ident, $($rest:tt)*) => {
        $(#[$doc])*
        pub const $name: u16 = $n;
        $crate::numbered_codes!(@ $n + 1; $($rest)*);
    };
}
