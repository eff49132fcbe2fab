//! Dynamic UI definitions: parse any text and generate its object model
//! with samples.
#![no_main]

use forms::ui::{generate, ModelOptions, UiDefinition};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(ui) = UiDefinition::parse(text, "ui.yaml") else { return };
    let opts = ModelOptions {
        package: "ex.Fuzz".into(),
        answers: None,
        loader: None,
        ids: None,
        nesting: 0,
    };
    let _ = generate(&ui, &opts);
});
