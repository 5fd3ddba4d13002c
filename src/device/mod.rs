//! Devices (temporary until the emu branch lands).
pub mod nvrtc;
