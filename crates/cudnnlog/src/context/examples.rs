//! The examples of `context`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `progress_of`.
#[test]
fn progress_of() -> Result<(), Box<dyn std::error::Error>> {
    use crate::context::progress_of;
    let p = progress_of(b"INFO train: epoch 2 step 3 batch 128 loss 2.3145");
    assert_eq!((p.epoch, p.step, p.batch), (Some(2), Some(3), Some(128)));
    assert_eq!(progress_of(b"scaler.step(opt)").step, None);
    Ok(())
}
