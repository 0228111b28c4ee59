//! Content that every game of one setup shares (resolved rules, card lists, maps): one copy in memory,
//! written to snapshots as the key it is built from.
//!
//! Binary snapshots carry the key's own compact encoding as one byte string, which a restore compares with
//! the live copies' byte for byte: the key is decoded (and its content built) only when no live game shares
//! it. In a six-player command-tokens round trip, decoding and comparing the key as a value was an eighth
//! of the time.

use crate::SetupError;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Content that never changes during play and is a function of a small key (typically the player count
/// and the configuration). Games hold it as a [`Shared`]; snapshots carry only the key, so a restore
/// finds the copy live games already share, or builds it again from the key.
///
/// ```
/// use coffer_sdk::{SharedContent, ContentTable, SetupError, Shared};
///
/// #[derive(Debug)]
/// struct Board { squares: Vec<u8> }
///
/// impl SharedContent for Board {
///     type Key = u16; // the number of players
///     fn build(players: &u16) -> Result<Board, SetupError> {
///         Ok(Board { squares: vec![0; 10 * usize::from(*players)] })
///     }
///     fn table() -> &'static ContentTable<Board> {
///         static TABLE: ContentTable<Board> = ContentTable::new();
///         &TABLE
///     }
/// }
///
/// let board = Shared::<Board>::get(&4).unwrap();
/// let bytes = postcard::to_stdvec(&board).unwrap();
/// assert_eq!(bytes, [1, 4]); // the key's one byte, not the 40 squares
/// let restored: Shared<Board> = postcard::from_bytes(&bytes).unwrap();
/// assert!(Shared::same(&board, &restored)); // the very copy the live game holds
/// assert_eq!(restored.squares.len(), 40);
/// ```
pub trait SharedContent: Send + Sync + Sized + 'static {
    /// What the content is built from. It must determine the content entirely: two equal keys build equal
    /// contents. Its serialization must determine it too (two keys written alike are equal), as the derived
    /// `Serialize` of plain data does.
    type Key: Clone + PartialEq + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Builds the content of `key`.
    ///
    /// # Errors
    /// [`SetupError`] for a key that names no valid content (a snapshot restoring it is refused with it).
    fn build(key: &Self::Key) -> Result<Self, SetupError>;

    /// The process-wide table of this type's live contents: a `static` of the implementing crate.
    fn table() -> &'static ContentTable<Self>;
}

/// The live contents of one [`SharedContent`] type, by key. It holds them weakly: a content is dropped with the
/// last game that shares it (keep a [`Shared`] yourself to keep one alive, e.g. the default setup's).
pub struct ContentTable<C: SharedContent> {
    entries: Mutex<Vec<Weak<Entry<C>>>>,
}

impl<C: SharedContent> ContentTable<C> {
    /// An empty table, for a `static`.
    pub const fn new() -> ContentTable<C> {
        ContentTable {
            entries: Mutex::new(Vec::new()),
        }
    }

    fn find(&self, key: &C::Key) -> Option<Shared<C>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .filter_map(Weak::upgrade)
            .find(|e| e.key == *key)
            .map(Shared)
    }

    /// The live content whose key encodes to `encoded`.
    fn find_encoded(&self, encoded: &[u8]) -> Option<Shared<C>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .filter_map(Weak::upgrade)
            .find(|e| e.encoded.as_deref() == Ok(encoded))
            .map(Shared)
    }

    /// Adds `entry` unless a live one with the same key is there already, which is then returned instead.
    fn insert(&self, entry: Entry<C>) -> Shared<C> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(live) = entries
            .iter()
            .filter_map(Weak::upgrade)
            .find(|e| e.key == entry.key)
        {
            return Shared(live);
        }
        entries.retain(|e| e.strong_count() > 0);
        let shared = Arc::new(entry);
        entries.push(Arc::downgrade(&shared));
        Shared(shared)
    }
}

impl<C: SharedContent> Default for ContentTable<C> {
    fn default() -> ContentTable<C> {
        ContentTable::new()
    }
}

struct Entry<C: SharedContent> {
    key: C::Key,
    /// The key's compact encoding, written to binary snapshots (or why the key cannot be encoded, which a
    /// binary snapshot then reports).
    encoded: Result<Box<[u8]>, String>,
    content: C,
}

impl<C: SharedContent> Entry<C> {
    fn new(key: C::Key, content: C) -> Entry<C> {
        let encoded = postcard::to_stdvec(&key)
            .map(Vec::into_boxed_slice)
            .map_err(|e| format!("the key of this setup cannot be written: {e}"));
        Entry {
            key,
            encoded,
            content,
        }
    }
}

/// A [`SharedContent`] shared by the games built from one key. Dereferences to the content; serializes as the
/// key alone and deserializes by finding the live copy of that key or building it.
pub struct Shared<C: SharedContent>(Arc<Entry<C>>);

impl<C: SharedContent> Shared<C> {
    /// The content of `key`: the copy live games already share, or a new one from [`SharedContent::build`].
    ///
    /// # Errors
    /// [`SharedContent::build`]'s.
    pub fn get(key: &C::Key) -> Result<Shared<C>, SetupError> {
        let table = C::table();
        if let Some(live) = table.find(key) {
            return Ok(live);
        }
        // Built outside the table's lock: building may be slow, and may panic.
        let content = C::build(key)?;
        Ok(table.insert(Entry::new(key.clone(), content)))
    }

    /// Shares `content`, which the caller built from `key` (with the same result as [`SharedContent::build`])
    /// along with other setup work; if live games already share the content of `key`, that copy is
    /// returned and `content` is dropped.
    pub fn adopt(key: C::Key, content: C) -> Shared<C> {
        C::table().insert(Entry::new(key, content))
    }

    /// The key the content was built from.
    pub fn key(&self) -> &C::Key {
        &self.0.key
    }

    /// Whether `other`, a content of another type built from the same kind of key, was built from an equal
    /// key (compared by their encodings, which is cheaper than comparing keys).
    pub fn same_key<D: SharedContent<Key = C::Key>>(&self, other: &Shared<D>) -> bool {
        match (&self.0.encoded, &other.0.encoded) {
            (Ok(a), Ok(b)) => a == b,
            _ => self.0.key == other.0.key,
        }
    }

    /// Whether two handles share one copy.
    pub fn same(a: &Shared<C>, b: &Shared<C>) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl<C: SharedContent> Deref for Shared<C> {
    type Target = C;
    #[inline]
    fn deref(&self) -> &C {
        &self.0.content
    }
}

impl<C: SharedContent> Clone for Shared<C> {
    fn clone(&self) -> Shared<C> {
        Shared(Arc::clone(&self.0))
    }
}

impl<C: SharedContent> PartialEq for Shared<C> {
    /// Equal keys build equal contents.
    fn eq(&self, other: &Shared<C>) -> bool {
        Shared::same(self, other) || self.0.key == other.0.key
    }
}

impl<C: SharedContent> fmt::Debug for Shared<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Shared").field(&self.0.key).finish()
    }
}

impl<C: SharedContent> Serialize for Shared<C> {
    /// The key itself in human-readable formats; its compact encoding as one byte string in binary ones.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            self.0.key.serialize(serializer)
        } else {
            match &self.0.encoded {
                Ok(encoded) => serializer.serialize_bytes(encoded),
                Err(why) => Err(serde::ser::Error::custom(why)),
            }
        }
    }
}

impl<'de, C: SharedContent> Deserialize<'de> for Shared<C> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Shared<C>, D::Error> {
        let built = |key: C::Key| {
            Shared::get(&key)
                .map_err(|e| D::Error::custom(format!("the content of this setup: {e}")))
        };
        if deserializer.is_human_readable() {
            return built(C::Key::deserialize(deserializer)?);
        }
        match deserializer.deserialize_bytes(EncodedKey(PhantomData::<C>))? {
            Ok(live) => Ok(live),
            Err(key) => built(key),
        }
    }
}

/// Reads a binary snapshot's key: the live content it names, or the decoded key of one to build.
struct EncodedKey<C>(PhantomData<C>);

impl<C: SharedContent> EncodedKey<C> {
    fn read<E: serde::de::Error>(encoded: &[u8]) -> Result<Result<Shared<C>, C::Key>, E> {
        if let Some(live) = C::table().find_encoded(encoded) {
            return Ok(Ok(live));
        }
        postcard::from_bytes(encoded)
            .map(Err)
            .map_err(|e| E::custom(format!("the key of this setup: {e}")))
    }
}

impl<C: SharedContent> serde::de::Visitor<'_> for EncodedKey<C> {
    type Value = Result<Shared<C>, C::Key>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the encoded key of a setup")
    }

    fn visit_bytes<E: serde::de::Error>(self, encoded: &[u8]) -> Result<Self::Value, E> {
        Self::read(encoded)
    }

    fn visit_byte_buf<E: serde::de::Error>(self, encoded: Vec<u8>) -> Result<Self::Value, E> {
        Self::read(&encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Builds of key 7, which only one test uses (tests run in parallel and share the table).
    static BUILT: AtomicUsize = AtomicUsize::new(0);

    #[derive(Debug, PartialEq)]
    struct Squares(Vec<u32>);

    impl SharedContent for Squares {
        type Key = u32;
        fn build(n: &u32) -> Result<Squares, SetupError> {
            if *n > 100 {
                return Err(SetupError::Config(format!("{n} squares is too many")));
            }
            if *n == 7 {
                BUILT.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Squares((0..*n).map(|i| i * i).collect()))
        }
        fn table() -> &'static ContentTable<Squares> {
            static TABLE: ContentTable<Squares> = ContentTable::new();
            &TABLE
        }
    }

    #[test]
    fn a_live_content_is_found_not_rebuilt_and_a_dropped_one_is_rebuilt() {
        let a = Shared::<Squares>::get(&7).unwrap();
        let built = BUILT.load(Ordering::Relaxed);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "7");
        let b: Shared<Squares> = serde_json::from_str(&json).unwrap();
        assert!(Shared::same(&a, &b));
        assert_eq!(BUILT.load(Ordering::Relaxed), built);
        drop((a, b));
        let c: Shared<Squares> = serde_json::from_str("7").unwrap();
        assert_eq!(BUILT.load(Ordering::Relaxed), built + 1);
        assert_eq!(c.0.content.0, vec![0, 1, 4, 9, 16, 25, 36]);
    }

    #[test]
    fn a_binary_key_finds_the_live_copy_by_its_bytes_and_rebuilds_a_dropped_one() {
        let a = Shared::<Squares>::get(&9).unwrap();
        let bytes = postcard::to_stdvec(&a).unwrap();
        assert_eq!(bytes, [1, 9], "a byte string holding the key's encoding");
        let b: Shared<Squares> = postcard::from_bytes(&bytes).unwrap();
        assert!(Shared::same(&a, &b));
        drop((a, b));
        let c: Shared<Squares> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(c.key(), &9);
        assert_eq!(c.0.content.0.len(), 9);
        // A byte string that is no key, and a key that builds nothing, are errors.
        let err = postcard::from_bytes::<Shared<Squares>>(&[1, 0xff]).unwrap_err();
        assert!(!err.to_string().is_empty());
        assert!(postcard::from_bytes::<Shared<Squares>>(&[2, 0xe8, 0x07]).is_err());
    }

    #[derive(Debug)]
    struct Roots(u32);

    impl SharedContent for Roots {
        type Key = u32;
        fn build(n: &u32) -> Result<Roots, SetupError> {
            Ok(Roots(n.isqrt()))
        }
        fn table() -> &'static ContentTable<Roots> {
            static TABLE: ContentTable<Roots> = ContentTable::new();
            &TABLE
        }
    }

    #[test]
    fn contents_of_two_types_tell_whether_their_keys_are_equal() {
        let squares = Shared::<Squares>::get(&4).unwrap();
        let roots = Shared::<Roots>::get(&4).unwrap();
        assert_eq!((*roots).0, 2);
        assert!(squares.same_key(&roots));
        assert!(!squares.same_key(&Shared::<Roots>::get(&3).unwrap()));
    }

    #[test]
    fn adopting_a_key_already_live_keeps_the_live_copy() {
        let live = Shared::<Squares>::get(&5).unwrap();
        let adopted = Shared::adopt(5, Squares(vec![0, 1, 4, 9, 16]));
        assert!(Shared::same(&live, &adopted));
        let other = Shared::adopt(6, Squares((0..6).map(|i| i * i).collect()));
        assert_eq!(other.key(), &6);
        assert!(!Shared::same(&live, &other));
    }

    #[test]
    fn a_key_that_builds_nothing_is_a_deserialization_error() {
        let err = serde_json::from_str::<Shared<Squares>>("1000").unwrap_err();
        assert!(
            err.to_string().contains("1000 squares is too many"),
            "{err}"
        );
    }
}
