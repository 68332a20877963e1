"""Address classification: the SSRF catalogue of issue 3, address by address (no I/O)."""

import ipaddress

import pytest

from dps_webhooks.domain.addresses import embedded_ipv4, is_allowed, refusal


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.255.255.254", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("172.31.255.255", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.1.1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("100.100.100.200", "a cloud metadata address"),
        ("100.64.0.1", "a carrier-grade NAT address"),
        ("100.127.255.254", "a carrier-grade NAT address"),
        ("0.0.0.0", "an unspecified address"),
        ("0.1.2.3", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("239.255.255.250", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "the broadcast address"),
        ("192.0.0.8", "a reserved address"),
        ("192.0.2.1", "a documentation address"),
        ("198.51.100.7", "a documentation address"),
        ("203.0.113.9", "a documentation address"),
        ("198.18.0.1", "a benchmarking address"),
        ("198.19.255.255", "a benchmarking address"),
        ("::1", "a loopback address"),
        ("::", "an unspecified address"),
        ("fe80::1", "a link-local address"),
        ("fec0::1", "a site-local address"),
        ("fc00::1", "a unique local address"),
        ("fd12:3456::1", "a unique local address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("ff02::1", "a multicast address"),
        ("2001:db8::1", "a documentation address"),
        ("3fff::1", "a documentation address"),
        ("2001:2::1", "a benchmarking address"),
        ("100::1", "a reserved address"),
        ("64:ff9b:1::a00:1", "a local-use NAT64 address"),
    ],
)
def test_refused_addresses_say_why(address, reason):
    assert refusal(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    ("address", "inner", "mechanism"),
    [
        ("::ffff:127.0.0.1", "a loopback address (127.0.0.1)", "an IPv4-mapped address"),
        ("::ffff:10.0.0.1", "a private address (10.0.0.1)", "an IPv4-mapped address"),
        ("::ffff:169.254.169.254", "a cloud metadata address (169.254.169.254)", "an IPv4-mapped address"),
        ("::127.0.0.1", "a loopback address (127.0.0.1)", "an IPv4-compatible address"),
        ("::ffff:0:127.0.0.1", "a loopback address (127.0.0.1)", "an IPv4-translated address"),
        ("2002:7f00:1::", "a loopback address (127.0.0.1)", "a 6to4 address"),
        ("2002:a9fe:a9fe::1", "a cloud metadata address (169.254.169.254)", "a 6to4 address"),
        ("64:ff9b::127.0.0.1", "a loopback address (127.0.0.1)", "a NAT64 address"),
        ("64:ff9b::100.64.0.1", "a carrier-grade NAT address (100.64.0.1)", "a NAT64 address"),
        # Teredo: the client address is stored inverted in the last 32 bits
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "a loopback address (127.0.0.1)", "a Teredo address"),
        ("2001:0:a00:1::f7f7:f7f7", "a private address (10.0.0.1)", "a Teredo address"),  # the server
    ],
)
def test_ipv6_forms_are_judged_by_the_ipv4_they_carry(address, inner, mechanism):
    assert refusal(ipaddress.ip_address(address)) == f"{inner} inside {mechanism}"


@pytest.mark.parametrize(
    ("address", "mechanism"),
    [
        ("::8.8.8.8", "an IPv4-compatible address"),
        ("::ffff:0:8.8.8.8", "an IPv4-translated address"),
        ("2002:808:808::1", "a 6to4 address"),
        ("64:ff9b::8.8.8.8", "a NAT64 address"),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", "a Teredo address"),
    ],
)
def test_translation_prefixes_are_refused_even_around_a_public_ipv4(address, mechanism):
    assert refusal(ipaddress.ip_address(address)) == mechanism


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_allowed(address):
    assert refusal(ipaddress.ip_address(address)) is None
    assert is_allowed(ipaddress.ip_address(address))


def test_embedded_ipv4_names_the_mechanism():
    assert embedded_ipv4(ipaddress.IPv6Address("::ffff:1.2.3.4")) == (
        "an IPv4-mapped address",
        ipaddress.IPv4Address("1.2.3.4"),
    )
    assert embedded_ipv4(ipaddress.IPv6Address("2606:4700::1")) is None


def test_the_allowlist_admits_addresses_inside_a_listed_network_only():
    loopback_only = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    assert is_allowed(ipaddress.ip_address("127.0.0.1"), loopback_only)
    assert is_allowed(ipaddress.ip_address("::1"), loopback_only)
    assert is_allowed(ipaddress.ip_address("::ffff:127.0.0.1"), loopback_only)
    assert not is_allowed(ipaddress.ip_address("10.0.0.1"), loopback_only)
    assert not is_allowed(ipaddress.ip_address("169.254.169.254"), loopback_only)
    assert not is_allowed(ipaddress.ip_address("127.0.0.1"))
