//! `run`: a command started with libleveldb_bloom swapped in, as eatmydata or
//! jemalloc.sh start theirs: the library this tool was installed with is found
//! relative to the tool's own path ([`locate`]), the variables that preload and set
//! it up are made ([`variables`]), then the tool replaces itself with the command, or
//! prints them for a shell or a service file ([`command`]).

pub mod command;
pub mod locate;
pub mod variables;
