//! The options a script's `--name[=value]` lines take: packetdrill's command-line
//! options (`config.c`), and the values it refuses.

/// The options packetdrill's command line takes (`config.c`, `options[]`): a
/// script's `--name` lines are the same options.
pub(super) const PACKETDRILL_OPTIONS: &[&str] = &[
    "ip_version",
    "bind_port",
    "code_command",
    "code_format",
    "code_sockopt",
    "connect_port",
    "remote_ip",
    "local_ip",
    "gateway_ip",
    "netmask_ip",
    "speed",
    "mss",
    "mtu",
    "init_scripts",
    "tolerance_usecs",
    "tolerance_percent",
    "wire_client",
    "wire_server",
    "wire_server_ip",
    "wire_server_at",
    "wire_server_port",
    "wire_client_dev",
    "wire_server_dev",
    "so_filename",
    "so_flags",
    "tcp_ts_ecr_scaled",
    "tcp_ts_tick_usecs",
    "strict_segments",
    "non_fatal",
    "dry_run",
    "is_anyip",
    "send_omit_free",
    "psp_udp_dport",
    "debug",
    "define",
    "verbose",
];

/// Why packetdrill would refuse `--name=value` (`config.c`'s checks), if it would.
pub(super) fn bad_option_value(name: &str, v: &str) -> Option<&'static str> {
    match name {
        "tolerance_usecs" | "tcp_ts_tick_usecs" | "bind_port" | "connect_port" | "mss" | "mtu"
        | "speed" | "wire_server_port" | "psp_udp_dport" => {
            v.parse::<u32>().is_err().then_some("a whole number")
        }
        "tolerance_percent" => v
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=100.0).contains(p))
            .is_none()
            .then_some("a number from 0 to 100"),
        _ => None,
    }
}
