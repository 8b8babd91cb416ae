SET autocommit = 0;
INSERT INTO t (id, i) VALUES (400, 400);
UPDATE t SET s = 'pending' WHERE id = 400;
CREATE TABLE implicit (id INT PRIMARY KEY);
INSERT INTO t (id, i) VALUES (401, 401);
SELECT id, s FROM t WHERE id >= 400;
