//! Connections per client address: each address holds at most its share of the server's connections
//! ([`Limits::connections_per_client`](crate::Limits::connections_per_client)), so one client cannot
//! take them all.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// The connections each client address holds open.
#[derive(Clone, Debug)]
pub struct PerClient {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    share: usize,
}

impl PerClient {
    /// At most `share` connections per address.
    pub fn new(share: usize) -> Self {
        Self {
            open: Arc::default(),
            share: share.max(1),
        }
    }

    /// One more connection for `addr`, held until the returned guard drops; `None` when the address
    /// holds its share already.
    pub fn take(&self, addr: IpAddr) -> Option<Share> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(addr).or_insert(0);
        if *count >= self.share {
            return None;
        }
        *count += 1;
        Some(Share {
            open: Arc::clone(&self.open),
            addr,
        })
    }

    /// The connections `addr` holds now.
    pub fn held(&self, addr: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(&addr).copied().unwrap_or(0)
    }
}

/// The share of the connection a request came on, which a WebSocket upgrade takes over: the socket
/// outlives the HTTP connection it upgraded, and keeps its place in the address's share until it closes.
#[derive(Clone, Debug)]
pub struct ConnectionShare(Arc<Mutex<Option<Share>>>);

impl ConnectionShare {
    /// Held by the connection until it closes or a request takes it over.
    pub fn new(share: Share) -> Self {
        Self(Arc::new(Mutex::new(Some(share))))
    }

    /// The share, for a socket that outlives the connection; `None` when another request took it.
    pub fn take_over(&self) -> Option<Share> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// One connection of a client address, given back on drop.
#[derive(Debug)]
pub struct Share {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    addr: IpAddr,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.addr) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnectionShare, PerClient};
    use std::net::{IpAddr, Ipv4Addr};

    #[test]
    fn an_address_holds_at_most_its_share_and_gets_it_back_when_a_connection_closes() {
        let per_client = PerClient::new(2);
        let one = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
        let two = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
        let a = per_client.take(one).expect("first");
        let _b = per_client.take(one).expect("second");
        assert!(per_client.take(one).is_none(), "a third is past the share");
        assert!(
            per_client.take(two).is_some(),
            "another address has its own share"
        );
        drop(a);
        assert_eq!(per_client.held(one), 1);
        assert!(
            per_client.take(one).is_some(),
            "a closed connection's place is free again"
        );
    }

    #[test]
    fn a_share_taken_over_by_a_socket_stays_held_after_its_connection_closes() {
        let per_client = PerClient::new(1);
        let one = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
        let connection = ConnectionShare::new(per_client.take(one).expect("first"));
        let socket = connection.take_over().expect("the upgrade takes the share");
        assert!(connection.take_over().is_none(), "taken once");
        drop(connection);
        assert_eq!(per_client.held(one), 1, "the socket holds it");
        drop(socket);
        assert_eq!(per_client.held(one), 0);
    }
}
