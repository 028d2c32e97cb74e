//! The filter block, built as LevelDB 1.23's `FilterBlockBuilder` builds it: one filter per 2 KiB of data-block offsets, made of the
//! user keys of the data blocks starting in that range; an offset range no data
//! block starts in gets an empty filter (an offset and no bytes).

/// LevelDB's `kFilterBaseLg`: one filter per 2^11 bytes of data-block offsets.
pub const FILTER_BASE_LG: u8 = 11;

/// Builds a filter block, the filters themselves made by `create` (the policy's
/// `CreateFilter`: it appends the filter of the keys it is given to the buffer).
pub struct FilterBlockBuilder<F> {
    create: F,
    /// The keys of the filter being gathered, back to back, and where each starts.
    keys: Vec<u8>,
    starts: Vec<usize>,
    /// The filters made so far, and where each starts in it.
    result: Vec<u8>,
    offsets: Vec<u32>,
    /// The keys each filter was made of, by filter index (0 for an empty filter).
    keys_per_filter: Vec<usize>,
}

impl<F: FnMut(&[&[u8]], &mut Vec<u8>)> FilterBlockBuilder<F> {
    pub fn new(create: F) -> Self {
        Self {
            create,
            keys: Vec::new(),
            starts: Vec::new(),
            result: Vec::new(),
            offsets: Vec::new(),
            keys_per_filter: Vec::new(),
        }
    }

    /// A data block starts at `offset`: the filters of the offset ranges before it
    /// are made (LevelDB's `StartBlock`). Offsets must not decrease.
    pub fn start_block(&mut self, offset: u64) {
        let index = offset >> FILTER_BASE_LG;
        while index > self.offsets.len() as u64 {
            self.generate_filter();
        }
    }

    /// Adds a user key of the current data block (duplicates are kept, as LevelDB
    /// keeps them).
    pub fn add_key(&mut self, key: &[u8]) {
        self.starts.push(self.keys.len());
        self.keys.extend_from_slice(key);
    }

    /// The filter block's contents (LevelDB's `Finish`): the last filter, the
    /// offsets, the offset of their array, the base's logarithm.
    pub fn finish(mut self) -> Vec<u8> {
        if !self.starts.is_empty() {
            self.generate_filter();
        }
        let array_offset = self.result.len() as u32;
        for offset in std::mem::take(&mut self.offsets) {
            self.result.extend_from_slice(&offset.to_le_bytes());
        }
        self.result.extend_from_slice(&array_offset.to_le_bytes());
        self.result.push(FILTER_BASE_LG);
        self.result
    }

    /// The contents as [`finish`](Self::finish) gives them, and the number of keys
    /// each filter was made of, by filter index (0 for an empty filter).
    pub fn finish_counted(mut self) -> (Vec<u8>, Vec<usize>) {
        if !self.starts.is_empty() {
            self.generate_filter();
        }
        let counts = std::mem::take(&mut self.keys_per_filter);
        (self.finish(), counts)
    }

    fn generate_filter(&mut self) {
        self.offsets.push(self.result.len() as u32);
        self.keys_per_filter.push(self.starts.len());
        if self.starts.is_empty() {
            return;
        }
        let ends = self.starts[1..].iter().copied().chain([self.keys.len()]);
        let keys: Vec<&[u8]> = self
            .starts
            .iter()
            .zip(ends)
            .map(|(&start, end)| &self.keys[start..end])
            .collect();
        (self.create)(&keys, &mut self.result);
        self.keys.clear();
        self.starts.clear();
    }
}
