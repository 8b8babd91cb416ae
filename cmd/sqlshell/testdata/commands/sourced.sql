-- run by source.txt
INSERT INTO t SELECT COUNT(*) + 1 FROM t;
