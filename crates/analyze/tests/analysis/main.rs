//! The integration tests of this crate, gathered into one test binary (one link,
//! not one per file): each module is a former test file, named as before.

mod capture;
mod common;
mod flows;
mod police;
mod signatures;
mod tcprs;
mod tcprs_wrong;
mod wireshark;
