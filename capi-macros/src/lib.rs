//! `#[alias(other_name)]` on an exported `extern "C"` function of leveldb-bloom-capi:
//! the function as written, and beside it a second exported function named
//! `other_name`, of the same signature, that calls it. The C API's
//! `leveldb_filterpolicy_*` names are made this way from the `leveldb_bloom_*`
//! functions, so that no signature is written twice; the header gets their
//! prototypes the same way (build.rs copies each function's prototype under its
//! alias).

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, FnArg, Ident, ItemFn, Pat};

/// Adds an exported alias of the function it is put on. See the crate's
/// documentation.
#[proc_macro_attribute]
pub fn alias(attr: TokenStream, item: TokenStream) -> TokenStream {
    let alias = parse_macro_input!(attr as Ident);
    let function = parse_macro_input!(item as ItemFn);
    let name = &function.sig.ident;
    let mut signature = function.sig.clone();
    signature.ident = alias;
    let mut arguments = Vec::new();
    for input in &signature.inputs {
        match input {
            FnArg::Typed(typed) => match &*typed.pat {
                Pat::Ident(binding) => arguments.push(binding.ident.clone()),
                other => {
                    return syn::Error::new_spanned(other, "#[alias] needs plain argument names")
                        .to_compile_error()
                        .into()
                }
            },
            FnArg::Receiver(receiver) => {
                return syn::Error::new_spanned(receiver, "#[alias] is for free functions")
                    .to_compile_error()
                    .into()
            }
        }
    }
    let summary = format!(
        "Alias of [`{name}`] (its first name, in LevelDB's C API family: a future \
         LevelDB could define it; new code uses the leveldb_bloom_ one)."
    );
    let safety = format!("As for `{name}`.");
    let call = if signature.unsafety.is_some() {
        // SAFETY (of the generated block): the alias takes the same arguments under
        // the same contract, passed on unchanged.
        quote! { unsafe { #name(#(#arguments),*) } }
    } else {
        quote! { #name(#(#arguments),*) }
    };
    quote! {
        #function

        #[doc = #summary]
        ///
        /// # Safety
        #[doc = #safety]
        #[no_mangle]
        pub #signature {
            #call
        }
    }
    .into()
}
