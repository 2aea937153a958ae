//! The interface this namespace reaches an address through, as `ip route get ADDR` answers
//! (an `RTM_GETROUTE` request): the monitor counts as senders of an interface only the peers
//! whose traffic crosses it. A local address (127.0.0.0/8, ::1, or any address of this
//! namespace) is reached through the loopback device.

use std::io;
use std::net::IpAddr;

use netlink_packet_route::route::{RouteAttribute, RouteMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::protocols::NETLINK_ROUTE;

use crate::netlink::exchange;
use crate::tcp_sockets::canonical;

/// The index of the output interface of the route to `dst`; None when the answer names
/// none (a blackhole or unreachable route); an error when there is no route at all.
pub fn output_ifindex(dst: IpAddr) -> io::Result<Option<u32>> {
    let dst = canonical(dst);
    let mut msg = RouteMessage::default();
    (msg.header.address_family, msg.header.destination_prefix_length) = match dst {
        IpAddr::V4(_) => (AddressFamily::Inet, 32),
        IpAddr::V6(_) => (AddressFamily::Inet6, 128),
    };
    msg.attributes.push(RouteAttribute::Destination(dst.into()));
    let replies = exchange(NETLINK_ROUTE, RouteNetlinkMessage::GetRoute(msg), false)?;
    Ok(replies.iter().find_map(|m| match m {
        RouteNetlinkMessage::NewRoute(r) => r.attributes.iter().find_map(|a| match a {
            RouteAttribute::Oif(index) => Some(*index),
            _ => None,
        }),
        _ => None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback_index() -> u32 {
        let name = std::ffi::CString::new("lo").unwrap();
        // SAFETY: a NUL-terminated name.
        unsafe { libc::if_nametoindex(name.as_ptr()) }
    }

    #[test]
    fn local_addresses_are_reached_through_loopback() {
        let lo = loopback_index();
        for a in ["127.0.0.1", "127.0.0.4", "::ffff:127.0.0.1"] {
            assert_eq!(output_ifindex(a.parse().unwrap()).unwrap(), Some(lo), "{a}");
        }
    }
}
