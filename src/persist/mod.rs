//! Durable state: see [`store`].

pub mod codec;
