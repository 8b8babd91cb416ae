INSERT INTO t (id, i) VALUES (1, 1);
INSERT INTO t (id, u) VALUES (200, -1);
INSERT INTO t (id, c) VALUES (201, 'far too long for eight');
INSERT INTO t (id, e) VALUES (202, 'z');
INSERT INTO t (id, da) VALUES (203, '2021-13-45');
UPDATE t SET i = (SELECT i FROM t WHERE id = 1) WHERE id = 2;
SELECT * FROM nonexistent;
