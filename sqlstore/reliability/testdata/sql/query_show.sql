SHOW CREATE TABLE t;
SHOW INDEXES FROM t;
SHOW TABLE STATUS;
DESCRIBE p;
EXPLAIN SELECT * FROM t WHERE s = 'one';
SELECT table_name, table_rows FROM information_schema.tables WHERE table_schema = 'fz';
