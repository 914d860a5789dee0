//! The write path's checks of tiers of context: a placement names a record that exists,
//! in a tier it is not in yet, within the tier's caps (records and tokens, counting the
//! batches in flight and this one); a release names a record in the tier; settings are
//! patched onto those in force when the batch is validated.

use ostrakon_core::{CoreError, PlacedBy, RecordRef, Seq, Tier, TierSettings};

use crate::change::{RecordId, TierSettingsPatch};
use crate::error::write::WriteError;
use crate::limits::MAX_REASON_BYTES;
use crate::write::validate::Batch;
use crate::write::validate::Field;

impl Batch<'_> {
    /// The tier settings this batch sees: its own change, a batch in flight's, the index's.
    pub(crate) fn tier_settings(&self) -> TierSettings {
        self.effects
            .tiers
            .or_else(|| self.writer.tiers())
            .unwrap_or_else(|| self.index.tier_settings(Seq(u64::MAX)))
    }

    /// Whether `record` is in `tier` once the batches in flight and this one so far apply.
    fn placed_now(&self, tier: &Tier, record: RecordRef) -> bool {
        let pending = self.writer.placements().chain(&self.effects.placements);
        let last =
            pending.filter(|(t, r, _, _)| t == tier && *r == record).map(|(_, _, placed, _)| *placed).last();
        last.unwrap_or_else(|| self.index.is_placed(tier, record, Seq(u64::MAX)))
    }

    /// The tokens a record's line takes in a context block.
    fn record_tokens(&self, record: RecordRef) -> usize {
        let text = match record {
            RecordRef::Fact(id) => match (self.index.fact(id), self.asserted_here(id)) {
                (Some(f), _) => crate::retrieve::docs::fact_sentence(self.index, &f),
                (None, Some(f)) => crate::retrieve::docs::fact_sentence(self.index, f),
                (None, None) => String::new(),
            },
            RecordRef::Entity(id) => self.index.entity(id).map(|e| e.name.clone()).unwrap_or_default(),
            RecordRef::Episode(id) => self.index.episode(id).map(|e| e.text.clone()).unwrap_or_default(),
        };
        crate::context::lines::estimate_tokens(&text) + 4
    }

    pub(crate) fn place(
        &mut self,
        record: RecordRef,
        tier: Tier,
        reason: Option<String>,
        by: PlacedBy,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        self.check_record(record, "record".to_owned())?;
        if self.placed_now(&tier, record) {
            return Err(CoreError::invalid_value(
                field("record"),
                record.to_string(),
                format!("already in {tier}"),
            )
            .into());
        }
        if !self.replay {
            let settings = self.tier_settings();
            let (max_items, max_tokens) = match tier {
                Tier::Core => (settings.core_max_items, settings.core_max_tokens),
                Tier::Active(_) => (settings.scope_max_items, settings.scope_max_tokens),
            };
            let mut members: Vec<(RecordRef, usize)> = self
                .index
                .tier_members(&tier, Seq(u64::MAX))
                .into_iter()
                .map(|(r, _)| (r, self.record_tokens(r)))
                .collect();
            for (t, r, placed, tokens) in self.writer.placements().chain(&self.effects.placements) {
                if *t == tier {
                    members.retain(|(m, _)| m != r);
                    if *placed {
                        members.push((*r, *tokens));
                    }
                }
            }
            let tokens = self.record_tokens(record);
            let items = members.len() as u64 + 1;
            if items > u64::from(max_items) {
                return Err(WriteError::LimitExceeded {
                    field: field("tier").to_string(),
                    value: items,
                    max: u64::from(max_items),
                });
            }
            let total = members.iter().map(|(_, t)| *t as u64).sum::<u64>() + tokens as u64;
            if total > u64::from(max_tokens) {
                return Err(WriteError::LimitExceeded {
                    field: field("tier").to_string(),
                    value: total,
                    max: u64::from(max_tokens),
                });
            }
            self.effects.placements.push((tier.clone(), record, true, tokens));
        } else {
            self.effects.placements.push((tier.clone(), record, true, 0));
        }
        self.events.push(ostrakon_core::Event::Placed { record, tier, reason, by });
        Ok(None)
    }

    pub(crate) fn release(
        &mut self,
        record: RecordRef,
        tier: Tier,
        reason: Option<String>,
        by: PlacedBy,
    ) -> Result<Option<RecordId>, WriteError> {
        let field = Field;
        if let Some(r) = &reason {
            CoreError::check_len(field("reason"), r.len(), MAX_REASON_BYTES, "bytes")?;
        }
        self.check_record(record, "record".to_owned())?;
        if !self.placed_now(&tier, record) {
            return Err(CoreError::invalid_value(
                field("record"),
                record.to_string(),
                format!("not in {tier}"),
            )
            .into());
        }
        self.effects.placements.push((tier.clone(), record, false, 0));
        self.events.push(ostrakon_core::Event::Released { record, tier, reason, by });
        Ok(None)
    }

    pub(crate) fn propose_placement(
        &mut self,
        record: RecordRef,
        tier: Tier,
        release: bool,
        reason: String,
    ) -> Result<Option<RecordId>, WriteError> {
        CoreError::check_len(Field("reason"), reason.len(), MAX_REASON_BYTES, "bytes")?;
        self.check_record(record, "record".to_owned())?;
        self.events.push(ostrakon_core::Event::PlacementProposed { record, tier, release, reason });
        Ok(None)
    }

    pub(crate) fn configure_tiers(
        &mut self,
        patch: &TierSettingsPatch,
    ) -> Result<Option<RecordId>, WriteError> {
        let settings = patch.apply(self.tier_settings());
        settings.validate()?;
        self.effects.tiers = Some(settings);
        self.events.push(ostrakon_core::Event::TiersConfigured(settings));
        Ok(None)
    }
}
