"""URL vetting: scheme, credentials, IP literals in every spelling, and what hosts resolve to."""

import ipaddress
import socket
import threading

import pytest

from dps_webhooks.adapters.url_guard import ResolutionTimedOut, Target, UrlRefused, vet_url

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://8.8.8.8/hook", "must use https"),
        ("ftp://8.8.8.8/hook", "must use https"),
        ("//8.8.8.8/hook", "must use https"),
        ("https://user:pass@8.8.8.8/hook", "must not contain credentials"),
        ("https://user@8.8.8.8/hook", "must not contain credentials"),
        ("https:///hook", "must have a host"),
        ("https://8.8.8.8:0/", "must not use port 0"),
        ("https://8.8.8.8:99999/", "is not a valid URL"),
        ("https://8.8.8.8/ho ok", "must not contain whitespace"),
        ("https://8.8.8.8/\r\nX: y", "must not contain whitespace"),
        ("https://[fe80::1%25eth0]/", "must not contain an IPv6 zone"),
        ("https://no-such-host.invalid/", "host does not resolve"),
    ],
)
def test_malformed_urls_are_refused(url, reason):
    with pytest.raises(UrlRefused, match=reason):
        vet_url(url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1/", "a loopback address (127.0.0.1)"),
        ("https://2130706433/", "a loopback address (127.0.0.1)"),  # decimal
        ("https://0x7f000001/", "a loopback address (127.0.0.1)"),  # hex
        ("https://0x7f.0.0.1/", "a loopback address (127.0.0.1)"),  # hex octet
        ("https://0177.0.0.1/", "a loopback address (127.0.0.1)"),  # octal
        ("https://127.1/", "a loopback address (127.0.0.1)"),  # short form
        ("https://017700000001/", "a loopback address (127.0.0.1)"),  # octal whole
        ("https://3232235777/", "a private address (192.168.1.1)"),
        ("https://0xa9fea9fe/", "a cloud metadata address (169.254.169.254)"),
        ("https://169.254.169.254/latest/meta-data/", "a cloud metadata address (169.254.169.254)"),
        ("https://100.100.100.200/", "a cloud metadata address (100.100.100.200)"),
        ("https://[fd00:ec2::254]/", "a cloud metadata address (fd00:ec2::254)"),
        ("https://100.64.0.1/", "a carrier-grade NAT address (100.64.0.1)"),
        ("https://10.0.0.1/", "a private address (10.0.0.1)"),
        ("https://0.0.0.0/", "an unspecified address (0.0.0.0)"),
        ("https://0/", "an unspecified address (0.0.0.0)"),
        ("https://[::1]/", "a loopback address (::1)"),
        ("https://[::]/", "an unspecified address (::)"),
        ("https://[::ffff:127.0.0.1]/", "a loopback address (127.0.0.1) inside an IPv4-mapped address"),
        ("https://[::ffff:7f00:1]/", "a loopback address (127.0.0.1) inside an IPv4-mapped address"),
        ("https://[::127.0.0.1]/", "a loopback address (127.0.0.1) inside an IPv4-compatible address"),
        ("https://[::ffff:0:127.0.0.1]/", "a loopback address (127.0.0.1) inside an IPv4-translated address"),
        ("https://[2002:7f00:1::1]/", "a loopback address (127.0.0.1) inside a 6to4 address"),
        ("https://[64:ff9b::7f00:1]/", "a loopback address (127.0.0.1) inside a NAT64 address"),
        ("https://[64:ff9b::a9fe:a9fe]/", "a cloud metadata address (169.254.169.254) inside a NAT64 address"),
        ("https://[64:ff9b:1::1]/", "a local-use NAT64 address"),
        ("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "a loopback address (127.0.0.1) inside a Teredo address"),
        ("https://[fe80::1]/", "a link-local address"),
        ("https://[fc00::1]/", "a unique local address"),
        ("https://[fec0::1]/", "a site-local address"),
        ("https://[ff02::1]/", "a multicast address"),
        ("https://224.0.0.1/", "a multicast address"),
        ("https://255.255.255.255/", "the broadcast address"),
        ("https://198.18.0.1/", "a benchmarking address"),
        ("https://192.0.2.1/", "a documentation address"),
        ("https://localhost/", "a loopback address"),
        ("https://LOCALHOST./hook", "a loopback address"),
    ],
)
def test_urls_reaching_non_public_addresses_are_refused(url, reason):
    with pytest.raises(UrlRefused, match="resolves to " + reason.replace("(", r"\(").replace(")", r"\)")):
        vet_url(url)


def test_an_ip_literal_url_targets_its_address_with_its_path_and_query():
    assert vet_url("https://8.8.8.8/hooks/in?x=1&y=2#frag") == Target("8.8.8.8", 443, "/hooks/in?x=1&y=2", "8.8.8.8")
    assert vet_url("https://[2606:4700:4700::1111]:8443") == Target(
        "2606:4700:4700::1111", 8443, "/", "2606:4700:4700::1111"
    )


def test_an_ipv4_mapped_public_address_is_reached_over_ipv4():
    assert vet_url("https://[::ffff:8.8.8.8]/").address == "8.8.8.8"


def test_the_host_header_keeps_a_non_default_port_and_ipv6_brackets():
    assert Target("hooks.example.com", 443, "/", "8.8.8.8").authority == "hooks.example.com"
    assert Target("hooks.example.com", 8443, "/", "8.8.8.8").authority == "hooks.example.com:8443"
    assert Target("2606:4700::1", 8443, "/", "2606:4700::1").authority == "[2606:4700::1]:8443"


def test_the_allowlist_lets_a_loopback_receiver_through():
    target = vet_url("https://localhost:8443/hook?a=1", LOOPBACK)
    assert (target.host, target.port, target.path_and_query) == ("localhost", 8443, "/hook?a=1")
    assert ipaddress.ip_address(target.address).is_loopback
    assert vet_url("https://2130706433:8443/", LOOPBACK).address == "127.0.0.1"


def test_the_allowlist_does_not_extend_beyond_its_networks():
    with pytest.raises(UrlRefused, match="a private address"):
        vet_url("https://10.0.0.1/", LOOPBACK)


def _fake_dns(monkeypatch, answers: dict[str, list[str]]) -> None:
    """Stand in for DNS (the only outside service here) with fixed answers."""

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
            for ip in answers[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_every_resolved_address_must_be_allowed(monkeypatch):
    _fake_dns(monkeypatch, {"mixed.example": ["93.184.216.34", "127.0.0.1"], "v6.example": ["2606:4700::1", "fd00::1"]})
    with pytest.raises(UrlRefused, match=r"a loopback address \(127.0.0.1\)"):
        vet_url("https://mixed.example/")
    with pytest.raises(UrlRefused, match="a unique local address"):
        vet_url("https://v6.example/")


def test_a_public_hostname_targets_its_first_address(monkeypatch):
    _fake_dns(monkeypatch, {"hooks.example.com": ["93.184.216.34", "93.184.216.35", "2606:2800::1"]})
    assert vet_url("https://Hooks.Example.com/in") == Target("hooks.example.com", 443, "/in", "93.184.216.34")


def test_a_hostname_resolving_to_metadata_or_a_scoped_link_local_address_is_refused(monkeypatch):
    _fake_dns(monkeypatch, {"meta.example": ["169.254.169.254"], "ll.example": ["fe80::1%eth0"]})
    with pytest.raises(UrlRefused, match="a cloud metadata address"):
        vet_url("https://meta.example/")
    with pytest.raises(UrlRefused, match="a link-local address"):
        vet_url("https://ll.example/")


@pytest.fixture
def stalled_dns(monkeypatch):
    """A DNS server that does not answer (until the test ends, so no resolver thread stays stuck)."""
    answer = threading.Event()

    def getaddrinfo(host, port, *args, **kwargs):
        answer.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    answer.set()


def test_a_host_whose_dns_stalls_is_refused_when_the_time_to_resolve_is_up(stalled_dns):
    with pytest.raises(ResolutionTimedOut, match=r"host did not resolve within 0\.2 s"):
        vet_url("https://stalled.example/", resolve_within=0.2)
    with pytest.raises(UrlRefused, match="did not resolve"):  # registration answers 400 with the reason
        vet_url("https://stalled.example/", resolve_within=0.01)
