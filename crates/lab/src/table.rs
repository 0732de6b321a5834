//! Tables written as Apache Parquet files: typed columns, nullable ones with their
//! definition levels, one row group per [`Writer::write`], Snappy compression. The
//! bytes depend on the rows alone (no timestamps, a fixed `created_by`), so the same
//! rows make the same file wherever they were computed.

use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// A column's values: one per row, or one per non-null row when nullable.
#[derive(Clone, Debug)]
pub enum Values {
    Bool(Vec<bool>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<ByteArray>),
}

/// One column: its name, values and, when nullable, a definition level per row
/// (1 present, 0 null).
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub values: Values,
    pub defs: Option<Vec<i16>>,
}

impl Column {
    fn new(name: &str, values: Values, nullable: bool) -> Column {
        Column {
            name: name.to_string(),
            values,
            defs: nullable.then(Vec::new),
        }
    }
    pub fn bool(name: &str) -> Column {
        Column::new(name, Values::Bool(Vec::new()), false)
    }
    pub fn i64(name: &str) -> Column {
        Column::new(name, Values::I64(Vec::new()), false)
    }
    pub fn opt_i64(name: &str) -> Column {
        Column::new(name, Values::I64(Vec::new()), true)
    }
    pub fn opt_f64(name: &str) -> Column {
        Column::new(name, Values::F64(Vec::new()), true)
    }
    pub fn str(name: &str) -> Column {
        Column::new(name, Values::Str(Vec::new()), false)
    }
    pub fn opt_str(name: &str) -> Column {
        Column::new(name, Values::Str(Vec::new()), true)
    }
    pub fn opt_bool(name: &str) -> Column {
        Column::new(name, Values::Bool(Vec::new()), true)
    }

    /// A null (in a nullable column).
    pub fn push_null(&mut self) {
        self.def(false);
    }
    fn def(&mut self, present: bool) {
        if let Some(d) = &mut self.defs {
            d.push(i16::from(present));
        }
    }
    pub fn push_bool(&mut self, x: Option<bool>) {
        self.def(x.is_some());
        if let (Values::Bool(v), Some(x)) = (&mut self.values, x) {
            v.push(x);
        }
    }
    pub fn push_i64(&mut self, x: Option<i64>) {
        self.def(x.is_some());
        if let (Values::I64(v), Some(x)) = (&mut self.values, x) {
            v.push(x);
        }
    }
    pub fn push_f64(&mut self, x: Option<f64>) {
        // NaN is no number: stored as null.
        let x = x.filter(|x| !x.is_nan());
        self.def(x.is_some());
        if let (Values::F64(v), Some(x)) = (&mut self.values, x) {
            v.push(x);
        }
    }
    pub fn push_str(&mut self, x: Option<&str>) {
        self.push_bytes(x.map(|x| bytes::Bytes::copy_from_slice(x.as_bytes())));
    }
    /// A string already held as shared bytes (a clone is a reference count).
    pub fn push_bytes(&mut self, x: Option<bytes::Bytes>) {
        self.def(x.is_some());
        if let (Values::Str(v), Some(x)) = (&mut self.values, x) {
            v.push(ByteArray::from(x));
        }
    }

    fn len(&self) -> usize {
        match (&self.defs, &self.values) {
            (Some(d), _) => d.len(),
            (None, Values::Bool(v)) => v.len(),
            (None, Values::I64(v)) => v.len(),
            (None, Values::F64(v)) => v.len(),
            (None, Values::Str(v)) => v.len(),
        }
    }

    /// An empty column of the same name and kind.
    fn empty_like(&self) -> Column {
        let values = match &self.values {
            Values::Bool(_) => Values::Bool(Vec::new()),
            Values::I64(_) => Values::I64(Vec::new()),
            Values::F64(_) => Values::F64(Vec::new()),
            Values::Str(_) => Values::Str(Vec::new()),
        };
        Column::new(&self.name, values, self.defs.is_some())
    }

    fn clear(&mut self) {
        if let Some(d) = &mut self.defs {
            d.clear();
        }
        match &mut self.values {
            Values::Bool(v) => v.clear(),
            Values::I64(v) => v.clear(),
            Values::F64(v) => v.clear(),
            Values::Str(v) => v.clear(),
        }
    }

    fn schema(&self) -> Type {
        let (physical, logical) = match self.values {
            Values::Bool(_) => (Physical::BOOLEAN, None),
            Values::I64(_) => (Physical::INT64, None),
            Values::F64(_) => (Physical::DOUBLE, None),
            Values::Str(_) => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        };
        let rep = if self.defs.is_some() {
            Repetition::OPTIONAL
        } else {
            Repetition::REQUIRED
        };
        Type::primitive_type_builder(&self.name, physical)
            .with_repetition(rep)
            .with_logical_type(logical)
            .build()
            .expect("a valid column type")
    }
}

/// Columns of equal length: the rows not yet written.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub cols: Vec<Column>,
}

impl Table {
    pub fn new(cols: Vec<Column>) -> Table {
        Table { cols }
    }
    pub fn rows(&self) -> usize {
        self.cols.first().map_or(0, Column::len)
    }
    /// The table's rows, leaving it empty.
    pub fn take(&mut self) -> Table {
        let empty = self.cols.iter().map(Column::empty_like).collect();
        std::mem::replace(self, Table { cols: empty })
    }
    /// Adds the rows of `other`, a table of the same columns, after these.
    pub fn append(&mut self, other: Table) {
        for (c, o) in self.cols.iter_mut().zip(other.cols) {
            assert_eq!(c.name, o.name, "tables of the same columns");
            if let (Some(d), Some(od)) = (&mut c.defs, o.defs) {
                d.extend(od);
            }
            match (&mut c.values, o.values) {
                (Values::Bool(v), Values::Bool(o)) => v.extend(o),
                (Values::I64(v), Values::I64(o)) => v.extend(o),
                (Values::F64(v), Values::F64(o)) => v.extend(o),
                (Values::Str(v), Values::Str(o)) => v.extend(o),
                _ => panic!("column {} of another kind", c.name),
            }
        }
    }
    /// The column named `name`.
    pub fn col(&mut self, name: &str) -> &mut Column {
        self.cols
            .iter_mut()
            .find(|c| c.name == name)
            .expect("a column of the table")
    }
    fn schema(&self) -> Arc<Type> {
        let fields = self.cols.iter().map(|c| Arc::new(c.schema())).collect();
        Arc::new(
            Type::group_type_builder("gentle")
                .with_fields(fields)
                .build()
                .expect("a valid schema"),
        )
    }
}

/// A Parquet file being written into memory.
pub struct Writer {
    w: SerializedFileWriter<Vec<u8>>,
}

fn err(e: parquet::errors::ParquetError) -> String {
    format!("writing Parquet: {e}")
}

impl Writer {
    /// A file with `table`'s columns.
    pub fn new(table: &Table) -> Result<Writer, String> {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by("gentle".to_string())
            // Minimum and maximum per column chunk (not per page): what readers
            // skip row groups by, at a fraction of the cost.
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .build();
        let w =
            SerializedFileWriter::new(Vec::new(), table.schema(), Arc::new(props)).map_err(err)?;
        Ok(Writer { w })
    }

    /// Writes the table's rows as one row group (nothing when it has none) and
    /// empties it.
    pub fn write(&mut self, table: &mut Table) -> Result<(), String> {
        if table.rows() == 0 {
            return Ok(());
        }
        let mut rg = self.w.next_row_group().map_err(err)?;
        let mut cols = table.cols.iter();
        while let Some(mut cw) = rg.next_column().map_err(err)? {
            let c = cols.next().expect("a column per schema field");
            let defs = c.defs.as_deref();
            match (&c.values, cw.untyped()) {
                (Values::Bool(v), ColumnWriter::BoolColumnWriter(w)) => {
                    w.write_batch(v, defs, None).map_err(err)?;
                }
                (Values::I64(v), ColumnWriter::Int64ColumnWriter(w)) => {
                    w.write_batch(v, defs, None).map_err(err)?;
                }
                (Values::F64(v), ColumnWriter::DoubleColumnWriter(w)) => {
                    w.write_batch(v, defs, None).map_err(err)?;
                }
                (Values::Str(v), ColumnWriter::ByteArrayColumnWriter(w)) => {
                    w.write_batch(v, defs, None).map_err(err)?;
                }
                _ => unreachable!("the schema follows the columns"),
            }
            cw.close().map_err(err)?;
        }
        rg.close().map_err(err)?;
        for c in &mut table.cols {
            c.clear();
        }
        Ok(())
    }

    /// Closes the file with key-value metadata; its bytes.
    pub fn finish(mut self, metadata: &[(&str, String)]) -> Result<Vec<u8>, String> {
        for (k, v) in metadata {
            self.w
                .append_key_value_metadata(KeyValue::new(k.to_string(), v.clone()));
        }
        self.w.into_inner().map_err(err)
    }
}

/// A whole table as a Parquet file's bytes.
pub fn to_bytes(mut table: Table, metadata: &[(&str, String)]) -> Result<Vec<u8>, String> {
    let mut w = Writer::new(&table)?;
    w.write(&mut table)?;
    w.finish(metadata)
}

/// A Parquet file's rows as a [`Table`] of its columns: what [`to_bytes`] wrote, read
/// back the same (to pass rows between processes, as the Ray backend does).
pub fn from_bytes(bytes: Vec<u8>) -> Result<Table, String> {
    use parquet::record::Field;
    let bad = |e: parquet::errors::ParquetError| format!("not a Parquet file of gentle's: {e}");
    let r = SerializedFileReader::new(bytes::Bytes::from(bytes)).map_err(bad)?;
    let mut cols = Vec::new();
    for c in r.metadata().file_metadata().schema_descr().columns() {
        let values = match c.physical_type() {
            Physical::BOOLEAN => Values::Bool(Vec::new()),
            Physical::INT64 => Values::I64(Vec::new()),
            Physical::DOUBLE => Values::F64(Vec::new()),
            Physical::BYTE_ARRAY => Values::Str(Vec::new()),
            other => return Err(format!("column {}: {other} is not gentle's", c.name())),
        };
        cols.push(Column::new(c.name(), values, c.self_type().is_optional()));
    }
    let mut t = Table::new(cols);
    for row in r.get_row_iter(None).map_err(bad)? {
        let row = row.map_err(bad)?;
        for (c, (_, f)) in t.cols.iter_mut().zip(row.get_column_iter()) {
            match f {
                Field::Null => c.push_null(),
                Field::Bool(x) => c.push_bool(Some(*x)),
                Field::Long(x) => c.push_i64(Some(*x)),
                Field::Double(x) => c.push_f64(Some(*x)),
                Field::Str(x) => c.push_str(Some(x)),
                other => return Err(format!("column {}: {other} is not gentle's", c.name)),
            }
        }
    }
    Ok(t)
}

/// The value of key `key` in a Parquet file's key-value metadata, and its number
/// of rows.
pub fn read_metadata(bytes: Vec<u8>, key: &str) -> Result<(Option<String>, i64), String> {
    let r = SerializedFileReader::new(bytes::Bytes::from(bytes))
        .map_err(|e| format!("not a Parquet file: {e}"))?;
    let fm = r.metadata().file_metadata();
    let v = fm
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|x| x.key == key))
        .and_then(|x| x.value.clone());
    Ok((v, fm.num_rows()))
}

/// Every row of the Parquet file at `path`, as a JSON object of its columns (a null
/// as null): for reading a table back, as `gentle view` and the tests do.
pub fn read_rows(
    path: &std::path::Path,
) -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
    use serde_json::Value;
    let f = std::fs::File::open(path)?;
    let reader = SerializedFileReader::new(f)?;
    let mut out = Vec::new();
    for row in reader.get_row_iter(None)? {
        let row = row?;
        let mut o = serde_json::Map::new();
        for (name, f) in row.get_column_iter() {
            o.insert(name.clone(), field_json(f));
        }
        out.push(Value::Object(o));
    }
    Ok(out)
}

fn field_json(f: &parquet::record::Field) -> serde_json::Value {
    use parquet::record::Field as F;
    use serde_json::Value;
    match f {
        F::Null => Value::Null,
        F::Bool(b) => Value::Bool(*b),
        F::Byte(x) => (*x).into(),
        F::Short(x) => (*x).into(),
        F::Int(x) => (*x).into(),
        F::Long(x) => (*x).into(),
        F::UByte(x) => (*x).into(),
        F::UShort(x) => (*x).into(),
        F::UInt(x) => (*x).into(),
        F::ULong(x) => (*x).into(),
        F::Float(x) => serde_json::Number::from_f64(*x as f64).map_or(Value::Null, Value::Number),
        F::Double(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        F::Str(x) => Value::String(x.clone()),
        other => Value::String(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reads_back_as_written_nulls_and_all() {
        let mut t = Table::new(vec![
            Column::str("s"),
            Column::opt_str("os"),
            Column::i64("i"),
            Column::opt_i64("oi"),
            Column::opt_f64("of"),
            Column::bool("b"),
            Column::opt_bool("ob"),
        ]);
        for k in 0..5i64 {
            let mut c = t.cols.iter_mut();
            c.next().unwrap().push_str(Some(&format!("row {k}")));
            c.next().unwrap().push_str((k % 2 == 0).then_some("even"));
            c.next().unwrap().push_i64(Some(-k));
            c.next().unwrap().push_i64((k != 3).then_some(k << 40));
            c.next()
                .unwrap()
                .push_f64((k != 1).then_some(0.1 * k as f64 + 1e-17));
            c.next().unwrap().push_bool(Some(k % 3 == 0));
            c.next().unwrap().push_bool((k != 4).then_some(k == 2));
        }
        let bytes = to_bytes(t.clone(), &[]).unwrap();
        let back = from_bytes(bytes.clone()).unwrap();
        assert_eq!(back.rows(), 5);
        assert_eq!(format!("{:?}", back.cols), format!("{:?}", t.cols));
        assert_eq!(to_bytes(back, &[]).unwrap(), bytes);
    }
}
